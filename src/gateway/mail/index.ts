// Outgoing mail for account self-service (issue 27): password-reset and email-verification links. With `smtp` in the
// config, nodemailer sends them over SMTP; without it nothing is sent and the link goes to the operator's log, so a
// small deployment still works (the operator passes the link on). Sending never holds up an account call: the handler
// answers first (the same answer whether or not the email has an account), the mail goes out after; a failure is logged.
import { createTransport, type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import { redactUrl } from '../upstream/redact.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Sends (or logs) a message; resolves when it was handed over, never rejects (failures are logged). */
  send(mail: Mail): Promise<void>;
  /** True when mail really leaves (SMTP configured). */
  readonly sends: boolean;
}

export interface SmtpOptions {
  url: string;
  from: string;
}

export function createMailer(smtp: SmtpOptions | undefined, logger?: Logger): Mailer {
  if (smtp === undefined) {
    return {
      sends: false,
      async send(mail) {
        logger?.warn(
          { to: mail.to, subject: mail.subject, text: mail.text },
          'mail not sent (no smtp configured): pass this message on to its recipient',
        );
      },
    };
  }
  // One connection per message (not pooled: nothing stays open between mails, nothing to close at stop). Bounded: a
  // mail server that hangs must not hold a socket forever.
  const url = new URL(smtp.url);
  for (const [k, ms] of [
    ['connectionTimeout', '10000'],
    ['greetingTimeout', '10000'],
    ['socketTimeout', '30000'],
  ])
    if (!url.searchParams.has(k)) url.searchParams.set(k, ms); // nodemailer reads its options from the query too
  const transport: Transporter = createTransport(url.toString());
  const server = redactUrl(smtp.url);
  return {
    sends: true,
    async send(mail) {
      try {
        await transport.sendMail({ from: smtp.from, to: mail.to, subject: mail.subject, text: mail.text });
        logger?.info({ to: mail.to, subject: mail.subject, server }, 'mail sent');
      } catch (e) {
        logger?.error({ err: { message: (e as Error).message }, to: mail.to, server }, 'mail not sent: SMTP failed');
      }
    },
  };
}
