// Sign-up modes and invites (issue 27 item 2; contracts/account.openrpc.json): `account_signUpMode` (open) tells the
// dashboard and the CLI which of config `accounts.signup` applies; admins issue, list and revoke single-use invite
// links (`admin_createInvite`, `admin_listInvites`, `admin_revokeInvite`; ./index.ts's gate lets only admins reach
// them). The link is `<publicBaseUrl>/signup?invite=<token>` (the server redirects it to the dashboard's sign-up page);
// bound to an email, it is mailed there (src/gateway/mail: with no `smtp`, written to the operator's log). Sign-up
// itself, with or without an invite, is account_signUp (./account.ts).
import * as store from '../../store/index.js';
import { notFound } from '../errors.js';
import { iso, type Caller, type Inner, type Kit } from './kit.js';

export type InviteMethods = Pick<
  Inner,
  'account_signUpMode' | 'admin_createInvite' | 'admin_listInvites' | 'admin_revokeInvite'
>;

/** The invite link for a token: the server's `/signup` (routes.ts) opens the dashboard's sign-up page with it. */
export const inviteUrl = (baseUrl: string, token: string) => `${baseUrl}/signup?invite=${encodeURIComponent(token)}`;

export function inviteHandlers(kit: Kit): InviteMethods {
  const { db, deps, mailer, signup } = kit;

  /** An admin's invite action, in the admin's own trail (logged, never thrown, on failure). */
  async function audit(c: Caller, action: 'invite_created' | 'invite_revoked', detail: Record<string, unknown>) {
    await store
      .recordAudit(db, { userId: c.userId, action, actorId: c.userId, ip: c.ip, detail })
      .catch((e: unknown) =>
        deps.logger?.error({ err: { message: (e as Error).message }, action }, 'audit event not recorded'),
      );
  }

  return {
    async account_signUpMode() {
      return { mode: signup.mode };
    },
    async admin_createInvite([req], c) {
      const ttlMs = req?.ttlHours === undefined ? signup.inviteTtlMs : req.ttlHours * 3_600_000;
      const inv = await store.createInvite(db, { email: req?.email, createdBy: c.userId, ttlMs });
      const url = inviteUrl(c.req.baseUrl, inv.token);
      await audit(c, 'invite_created', { invite: inv.id, ...(inv.email === undefined ? {} : { email: inv.email }) });
      if (inv.email === undefined)
        deps.logger?.info({ invite: inv.id, url }, 'invite issued (not bound to an email): pass the link on');
      else {
        const hours = Math.round(ttlMs / 3_600_000);
        // Handed to the SMTP server before the answer (the admin learns whether it left); without smtp, the mailer
        // writes it to the operator's log. Never throws: a failed send is logged and `mailed` says false.
        await mailer.send({
          to: inv.email,
          subject: 'You are invited to rpcgate',
          text: `${c.admin?.email ?? 'An operator'} invites you to create an rpcgate account with ${inv.email}.\n\nSign up here — the link works once, for ${hours} hours:\n${url}\n\nIf you did not expect this, ignore this mail.\n`,
        });
      }
      return {
        id: inv.id,
        url,
        expiresAt: iso(inv.expiresAt),
        email: inv.email ?? null,
        mailed: inv.email !== undefined && mailer.sends,
      };
    },
    async admin_listInvites() {
      const list = await store.listInvites(db);
      return {
        invites: list.map((i) => ({
          id: i.id,
          email: i.email ?? null,
          createdAt: iso(i.createdAt),
          expiresAt: iso(i.expiresAt),
          status: i.status,
          ...(i.usedAt === undefined ? {} : { usedAt: iso(i.usedAt) }),
          ...(i.usedBy === undefined ? {} : { usedBy: i.usedBy }),
          createdBy: i.createdByEmail ?? null,
        })),
      };
    },
    async admin_revokeInvite([{ id }], c) {
      const r = await store.revokeInvite(db, id);
      if (r === undefined) throw notFound('invite', id);
      if (r) await audit(c, 'invite_revoked', { invite: id });
      return { revoked: r };
    },
  };
}
