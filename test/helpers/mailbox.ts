// A real SMTP server for the tests (the `smtp-server` package on 127.0.0.1, port 0) that keeps every message it
// receives, parsed by `mailparser`: tests read the link out of the mail as a user would.
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string;
  from: string;
  subject: string;
  text: string;
}

export interface Mailbox {
  /** smtp://127.0.0.1:<port> — what `smtp.url` is set to. */
  url: string;
  readonly received: readonly ReceivedMail[];
  /** The first message to `to` (after `skip` earlier ones) that arrives within `timeoutMs`. */
  next(to: string, timeoutMs?: number, skip?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startMailbox(): Promise<Mailbox> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, done) {
      simpleParser(stream).then(
        (m) => {
          const to = Array.isArray(m.to) ? m.to.flatMap((a) => a.value) : (m.to?.value ?? []);
          for (const a of to)
            received.push({
              to: a.address ?? '',
              from: m.from?.text ?? '',
              subject: m.subject ?? '',
              text: m.text ?? '',
            });
          done();
        },
        (e: Error) => done(e),
      );
    },
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    async next(to, timeoutMs = 10_000, skip = 0) {
      const t0 = Date.now();
      for (;;) {
        const mine = received.filter((m) => m.to === to);
        if (mine.length > skip) return mine[skip];
        if (Date.now() - t0 > timeoutMs) throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

/** The token of a mailed link `<base>/#/<purpose>/<token>`. */
export function tokenIn(mail: ReceivedMail, purpose: 'reset' | 'verify'): { link: string; token: string } {
  const m = new RegExp(`(\\S+/#/${purpose}/([A-Za-z0-9_-]{43}))`).exec(mail.text);
  if (m === null) throw new Error(`no ${purpose} link in: ${mail.text}`);
  return { link: m[1], token: m[2] };
}
