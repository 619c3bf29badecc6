// The Python that type-checks and runs generated Python clients: the first interpreter (Debian's /usr/bin/python3, then
// python3 on PATH) that can run `-m mypy` (Debian's python3-mypy; .ci/run installs it). Under CI a missing mypy is an
// error; elsewhere the tests that need it skip with a message saying how to install it.
import { execFileSync } from 'node:child_process';

export interface MypyPython {
  /** The interpreter (standard library only is what the generated clients need). */
  python: string;
  /** `mypy --version` output, e.g. "mypy 1.0.1 (compiled: yes)". */
  mypy: string;
  /** `python --version` output. */
  version: string;
}

const CANDIDATES = ['/usr/bin/python3', 'python3'];

let found: MypyPython | null | undefined;

/** The first interpreter with mypy, or undefined (cached). */
export function mypyPython(): MypyPython | undefined {
  if (found !== undefined) return found ?? undefined;
  found = null;
  for (const python of CANDIDATES) {
    try {
      const mypy = execFileSync(python, ['-m', 'mypy', '--version'], {
        encoding: 'utf8',
        timeout: 60_000,
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
      const version = execFileSync(python, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
      found = { python, mypy, version };
      break;
    } catch {
      // not this one
    }
  }
  return found ?? undefined;
}

export const MYPY_MISSING =
  'mypy is not installed for /usr/bin/python3 or python3 (Debian: apt-get install -y python3-mypy)';

/** Under CI: the interpreter or an error. Elsewhere: the interpreter, or undefined after a warning naming `what` skips. */
export function requireMypy(what: string): MypyPython | undefined {
  const py = mypyPython();
  if (py) return py;
  if (process.env.CI) throw new Error(`CI is set but ${MYPY_MISSING}: ${what} cannot run`);
  console.warn(`[${what}] SKIPPED: ${MYPY_MISSING} (required when CI is set)`);
  return undefined;
}
