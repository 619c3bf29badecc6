// Which new passwords are accepted (sign-up). Refused, with a reason for the form:
// - whitespace only, or fewer than 5 different characters (`aaaaaaaa`, `12121212`);
// - one of the most common passwords (below, compared without case and with trailing digits/punctuation removed);
// - a straight run on the keyboard or the alphabet (`12345678`, `qwertyuiop`, `abcdefgh`);
// - containing the email's local part;
// - a zxcvbn-ts score below MIN_SCORE (3 of 4: "safely unguessable"), when @zxcvbn-ts/core and
//   @zxcvbn-ts/language-common are installed — loaded once, lazily; without them the rules above still apply.
// Length (8..128) is the contract's (schema) check.

export const MIN_SCORE = 3;

// The most used passwords of 8+ characters in public breach corpora (SecLists / NCSC top lists), lower-case.
const COMMON = new Set(
  `password passw0rd p@ssw0rd p@ssword password1 password12 password123 iloveyou sunshine princess football baseball
  basketball welcome welcome1 trustno1 superman starwars letmein letmein1 whatever michelle jennifer corvette computer
  internet zaq12wsx 1qaz2wsx qazwsxedc qwertyui qwertyuiop qwerty123 1q2w3e4r 1q2w3e4r5t q1w2e3r4 q1w2e3r4t5 abc12345
  abcd1234 changeme administrator admin123 dragon monkey master shadow football1 iloveyou1 charlie michael jordan23
  mustang liverpool chelsea arsenal killer freedom hunter2 baseball1 sunshine1 princess1 12qwaszx asdfghjkl asdfasdf
  zxcvbnm zxcvbnm1 secret123 mypassword yourpassword letmein123 blink182 pokemon naruto samsung fuckyou starwars1
  whatever1 computer1 cookie123 butterfly flower123 hello123 helloworld loveyou lovely1 passpass testtest test1234
  default guest123 rpcgate ethereum bitcoin crypto123 metamask`.split(/\s+/).filter((w) => w !== ''),
);

const RUNS = ['abcdefghijklmnopqrstuvwxyz', '01234567890', 'qwertyuiopasdfghjklzxcvbnm', 'qwertzuiop', 'azertyuiop', '1qaz2wsx3edc4rfv5tgb'];

/** A strength estimate: zxcvbn's score 0..4 and its warning. */
export type Strength = (password: string, userInputs: readonly string[]) => { score: number; warning?: string };

let estimator: Promise<Strength | undefined> | undefined;

/** zxcvbn-ts, when installed (v3 `zxcvbn` + `zxcvbnOptions`, or v4 `ZxcvbnFactory`). */
function loadZxcvbn(): Promise<Strength | undefined> {
  // A variable specifier: the packages are optional (type-checking must not need them).
  const core = '@zxcvbn-ts/core';
  const common = '@zxcvbn-ts/language-common';
  return (estimator ??= Promise.all([import(core), import(common)]).then(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    ([c, l]: any[]) => {
      const options = { graphs: l.adjacencyGraphs, dictionary: { ...l.dictionary } };
      if (typeof c.ZxcvbnFactory === 'function') {
        const f = new c.ZxcvbnFactory(options);
        return (pw: string, inputs: readonly string[]) => toStrength(f.check(pw, [...inputs]));
      }
      c.zxcvbnOptions.setOptions(options);
      return (pw: string, inputs: readonly string[]) => toStrength(c.zxcvbn(pw, [...inputs]));
    },
    () => undefined,
  ));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
// Without a language package the warning is a translation key (`similarToCommon`): shown only when it is a sentence.
const toStrength = (r: any) => ({ score: Number(r.score), warning: typeof r.feedback?.warning === 'string' && r.feedback.warning.includes(' ') ? r.feedback.warning : undefined });

/** True when the zxcvbn-ts estimator is installed and used (also loads it: call at start, the first sign-up is then not slower). */
export async function strengthEstimatorAvailable(): Promise<boolean> {
  return (await loadZxcvbn()) !== undefined;
}

function isRun(s: string): boolean {
  if (s.length < 6) return false;
  for (const r of RUNS) for (const seq of [r, [...r].reverse().join('')]) if (seq.includes(s)) return true;
  return false;
}

/** The reason a new password is refused, or undefined when it is acceptable. */
export async function weakPasswordReason(password: string, email = ''): Promise<string | undefined> {
  if (password.trim() === '') return 'must not be only spaces';
  const lower = password.toLowerCase();
  if (new Set(lower).size < 5) return 'has too few different characters';
  const core = lower.replace(/[\d\W_]+$/u, '').replace(/^[\d\W_]+/u, '');
  if (COMMON.has(lower) || COMMON.has(core) || COMMON.has(lower.replace(/\s+/g, ''))) return 'is one of the most common passwords';
  if (isRun(lower.replace(/\s+/g, ''))) return 'is a run of keys or letters (easy to guess)';
  const local = email.split('@')[0].toLowerCase();
  if (local.length >= 4 && lower.includes(local)) return 'must not contain your email address';
  const z = await loadZxcvbn();
  if (z !== undefined) {
    const r = z(password, [email, local, 'rpcgate']);
    if (r.score < MIN_SCORE) return `is too easy to guess (strength ${r.score} of 4, at least ${MIN_SCORE} needed)${r.warning ? `: ${r.warning}` : ''}`;
  }
  return undefined;
}
