// Which new passwords are accepted (sign-up). Refused, with a reason for the form:
// - whitespace only, or fewer than 5 different characters (`aaaaaaaa`, `12121212`);
// - one of the most common passwords (below, compared without case and with trailing digits/punctuation removed);
// - a straight run on the keyboard or the alphabet (`12345678`, `qwertyuiop`, `abcdefgh`);
// - containing the email's local part;
// - a zxcvbn-ts score below MIN_SCORE (3 of 4: "safely unguessable"; @zxcvbn-ts/core + language-common).
// The rules (cheap) give the form a plain reason for the usual cases; zxcvbn costs up to tens of ms of CPU on this
// thread for a long crafted input, so it sees at most ESTIMATE_CHARS characters and the sign-up handler runs it only
// after the sign-up throttle (each client address gets a few per hour).
// Length (8..128) is the contract's (schema) check.

export const MIN_SCORE = 3;
/** zxcvbn scores this many leading characters (a longer passphrase is judged by its first 64). */
export const ESTIMATE_CHARS = 64;

// The most used passwords of 8+ characters in public breach corpora (SecLists / NCSC top lists), lower-case.
const COMMON = new Set(
  `password passw0rd p@ssw0rd p@ssword password1 password12 password123 iloveyou sunshine princess football baseball
  basketball welcome welcome1 trustno1 superman starwars letmein letmein1 whatever michelle jennifer corvette computer
  internet zaq12wsx 1qaz2wsx qazwsxedc qwertyui qwertyuiop qwerty123 1q2w3e4r 1q2w3e4r5t q1w2e3r4 q1w2e3r4t5 abc12345
  abcd1234 changeme administrator admin123 dragon monkey master shadow football1 iloveyou1 charlie michael jordan23
  mustang liverpool chelsea arsenal killer freedom hunter2 baseball1 sunshine1 princess1 12qwaszx asdfghjkl asdfasdf
  zxcvbnm zxcvbnm1 secret123 mypassword yourpassword letmein123 blink182 pokemon naruto samsung starwars1
  whatever1 computer1 cookie123 butterfly flower123 hello123 helloworld loveyou lovely1 passpass testtest test1234
  default guest123 rpcgate ethereum bitcoin crypto123 metamask`
    .split(/\s+/)
    .filter((w) => w !== ''),
);

const RUNS = [
  'abcdefghijklmnopqrstuvwxyz',
  '01234567890',
  'qwertyuiopasdfghjklzxcvbnm',
  'qwertzuiop',
  'azertyuiop',
  '1qaz2wsx3edc4rfv5tgb',
];

// zxcvbn-ts with its common dictionaries (passwords, names, words) and keyboard graphs: loaded and built once, on
// first use (~0.5 s; the service warms it at start), so importing this module — e.g. every CLI command — costs nothing.
type Estimator = { check(password: string, userInputs: string[]): { score: number } };
let estimator: Promise<Estimator> | undefined;
export function loadStrengthEstimator(): Promise<Estimator> {
  return (estimator ??= Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common')]).then(
    ([{ ZxcvbnFactory }, { adjacencyGraphs, dictionary }]) =>
      new ZxcvbnFactory({ graphs: adjacencyGraphs, dictionary: { ...dictionary }, maxLength: ESTIMATE_CHARS }),
  ));
}

function isRun(s: string): boolean {
  if (s.length < 6) return false;
  for (const r of RUNS) for (const seq of [r, [...r].reverse().join('')]) if (seq.includes(s)) return true;
  return false;
}

/** The plain rules: the reason a new password is refused, or undefined. Cheap. */
export function passwordRuleReason(password: string, email = ''): string | undefined {
  if (password.trim() === '') return 'must not be only spaces';
  const lower = password.toLowerCase();
  if (new Set(lower).size < 5) return 'has too few different characters';
  const core = lower.replace(/[\d\W_]+$/u, '').replace(/^[\d\W_]+/u, '');
  if (COMMON.has(lower) || COMMON.has(core) || COMMON.has(lower.replace(/\s+/g, '')))
    return 'is one of the most common passwords';
  if (isRun(lower.replace(/\s+/g, ''))) return 'is a run of keys or letters (easy to guess)';
  const local = email.split('@')[0].toLowerCase();
  if (local.length >= 4 && lower.includes(local)) return 'must not contain your email address';
  return undefined;
}

/** zxcvbn-ts: the reason a new password is too easy to guess, or undefined. */
export async function passwordStrengthReason(password: string, email = ''): Promise<string | undefined> {
  const r = (await loadStrengthEstimator()).check(password.slice(0, ESTIMATE_CHARS), [
    email,
    email.split('@')[0],
    'rpcgate',
  ]);
  if (r.score < MIN_SCORE) return `is too easy to guess (strength ${r.score} of 4, at least ${MIN_SCORE} needed)`;
  return undefined;
}

/** Both checks: the reason a new password is refused, or undefined when it is acceptable. */
export async function weakPasswordReason(password: string, email = ''): Promise<string | undefined> {
  return passwordRuleReason(password, email) ?? (await passwordStrengthReason(password, email));
}
