// Where the CLI keeps account API sessions between commands: one JSON file, one entry per server origin (the
// session cookie is per origin, as in a browser). `signup`/`login` write the entry, `logout` removes it, and a
// command the server answers "no session" drops a dead entry.
//
// File: $RPCGATE_CONFIG_DIR/sessions.json, else $XDG_CONFIG_HOME/rpcgate/sessions.json, else
// ~/.config/rpcgate/sessions.json. Directory 0700, file 0600 (it holds bearer secrets). Written whole to a temporary
// file in the same directory and renamed over the old one, so concurrent CLI runs never leave a torn file.
//   { "version": 1, "sessions": { "http://127.0.0.1:8080": { "cookie": "rpcgate_session=…", "expiresAt": "…",
//     "email": "…", "userId": "usr_…", "savedAt": "…" } } }
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const SESSION_COOKIE = 'rpcgate_session';

export interface StoredSession {
  /** The `name=value` pair sent back in the `Cookie` header. */
  cookie: string;
  /** When the server said the session ends (ISO 8601); entries past it are ignored and pruned. */
  expiresAt?: string;
  email?: string;
  userId?: string;
  savedAt: string;
}

interface SessionFile {
  version: 1;
  sessions: Record<string, StoredSession>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RPCGATE_CONFIG_DIR) return env.RPCGATE_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'rpcgate');
}

const live = (s: StoredSession, now: number) => s.expiresAt === undefined || !(Date.parse(s.expiresAt) <= now);

export class SessionStore {
  readonly file: string;

  constructor(readonly dir: string = configDir()) {
    this.file = join(dir, 'sessions.json');
  }

  private read(): SessionFile {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, sessions: {} };
      throw e;
    }
    try {
      const parsed = JSON.parse(text) as Partial<SessionFile>;
      if (parsed && typeof parsed.sessions === 'object' && parsed.sessions !== null)
        return { version: 1, sessions: parsed.sessions };
    } catch {
      // A damaged file holds nothing usable: start over rather than refuse every command.
    }
    return { version: 1, sessions: {} };
  }

  private write(f: SessionFile): void {
    const now = Date.now();
    for (const [origin, s] of Object.entries(f.sessions)) if (!live(s, now)) delete f.sessions[origin];
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(f, null, 2)}\n`, { mode: 0o600 });
      chmodSync(tmp, 0o600); // mode on create is masked by umask; make it exact
      renameSync(tmp, this.file);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
  }

  /** The live session for a server origin, if any. */
  get(origin: string): StoredSession | undefined {
    const s = this.read().sessions[origin];
    return s && live(s, Date.now()) ? s : undefined;
  }

  set(origin: string, session: StoredSession): void {
    const f = this.read();
    f.sessions[origin] = session;
    this.write(f);
  }

  /** Removes the origin's entry; true when there was one. */
  delete(origin: string): boolean {
    const f = this.read();
    if (!(origin in f.sessions)) return false;
    delete f.sessions[origin];
    this.write(f);
    return true;
  }
}
