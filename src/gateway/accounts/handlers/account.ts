// The account API's `account_…` methods (contracts/account.openrpc.json); ./index.ts merges the namespaces.
// Sign-up, log-in (throttled, device cookies), log-out, the session's user; self-service (issue 27): password change,
// account deletion, password reset and email verification by mailed single-use links; the quota-alert webhook.
import { randomBytes } from 'node:crypto';
import { invalidParams, RpcError } from '@rpcgate/toolkit/errors';
import { webhookUrlRefusal } from '../../alerts/webhook-address.js';
import { hashPassword, verifyPassword } from '../../secrets/index.js';
import { passwordRuleReason, passwordStrengthReason } from '../../secrets/password-policy.js';
import * as store from '../../store/index.js';
import { BAD_CREDENTIALS, NO_SESSION, SUSPENDED, inviteRequired, SIGNUP_CLOSED } from '../errors.js';
import { clearedSessionCookie } from '../session.js';
import type { LogInAttempt } from '../throttle.js';
import type { InviteMethods } from './invites.js';
import { iso, type Caller, type Kit, type Namespace } from './kit.js';

/** -32602 naming the param that holds a password or token and why it was refused. */
const refused = (param: string, path: string, reason: string) =>
  invalidParams(`${path.split('/').pop()} ${reason}`, { param, path, reason });

const BAD_TOKEN = 'is not valid: the link is unknown, used or expired — ask for a new one';

/** account_signUpMode is ./invites.ts's. */
export function accountHandlers(kit: Kit): Omit<Namespace<'account'>, keyof InviteMethods> {
  const { db, throttle, devices, dummy, user, startSession, selfService, mailer, deps, audit, signup } = kit;

  // A burst of failed log-ins on an account (a per-email counter refused) is recorded once per counter window on this
  // replica, not once per refused attempt.
  const throttledNoted = new Map<string, number>();
  const configAdmins = new Set((deps.admins ?? []).map(store.normalizeEmail));
  async function noteThrottled(e: unknown, email: string, c: Caller): Promise<void> {
    const scope = e instanceof RpcError ? (e.data as { scope?: string } | undefined)?.scope : undefined;
    if (scope !== 'email+ip' && scope !== 'email' && scope !== 'device') return;
    const key = `${email}|${scope}`;
    const now = Date.now();
    if ((throttledNoted.get(key) ?? 0) > now) return;
    if (throttledNoted.size > 10_000) throttledNoted.clear();
    throttledNoted.set(key, now + 15 * 60_000);
    const u = await store.findUserByEmail(db, email);
    if (u !== undefined) await audit(c, 'login_throttled', { scope }, u.id);
  }

  /** Sign-up's password rules, for a new password at `path`. */
  async function checkNewPassword(password: string, email: string, param: string, path: string): Promise<void> {
    const rule = passwordRuleReason(password, email);
    if (rule !== undefined) throw refused(param, path, rule);
    const weak = await passwordStrengthReason(password, email);
    if (weak !== undefined) throw refused(param, path, weak);
  }

  /** A password check under a log-in attempt's points (known devices and addresses wait in the gate's priority
   *  queue); refused by the hashing gate, the points come back: nothing was checked. */
  async function verifyCounted(attempt: LogInAttempt, stored: string, password: string): Promise<boolean> {
    try {
      return await throttle.hash(() => verifyPassword(stored, password), attempt.trust !== 'none');
    } catch (e) {
      await throttle.refundLogIn(attempt);
      throw e;
    }
  }

  /** The signed-in user's password, checked like a log-in (the same counters: guessing it here is no cheaper). */
  async function checkOwnPassword(c: Caller, password: string, param: string, path: string) {
    const u = await store.getUserWithPassword(db, c.userId);
    if (u === undefined) throw NO_SESSION; // deleted meanwhile
    const attempt = await throttle
      .beforeLogIn(u.email, c.ip, devices.verify(c.req.device, u.email))
      .catch(async (e: unknown) => {
        await noteThrottled(e, u.email, c); // a guessing burst here is audited as a log-in burst is
        throw e;
      });
    if (!(await verifyCounted(attempt, u.passwordHash, password)))
      throw refused(param, path, 'is not your current password');
    await throttle.loggedIn(attempt);
    return u;
  }

  /** Issues a token and mails its link — after the answer, so the answer takes the same time whether or not the email
   *  has an account. Never throws (failures are logged). */
  function mailLink(u: store.User, purpose: store.AccountTokenPurpose, baseUrl: string): void {
    const ttlMs = purpose === 'reset' ? selfService.resetTtlMs : selfService.verifyTtlMs;
    const send = async () => {
      const { token } = await store.createAccountToken(db, u.id, purpose, ttlMs);
      const link = `${baseUrl}/#/${purpose}/${token}`;
      const valid =
        ttlMs >= 3_600_000 ? `${Math.round(ttlMs / 3_600_000)} hours` : `${Math.round(ttlMs / 60_000)} minutes`;
      await mailer.send(
        purpose === 'reset'
          ? {
              to: u.email,
              subject: 'Reset your rpcgate password',
              text: `Someone (hopefully you) asked to reset the password of the rpcgate account ${u.email}.\n\nSet a new password here — the link works once, for ${valid}:\n${link}\n\nIf it was not you, ignore this mail: your password stays as it is.\n`,
            }
          : {
              to: u.email,
              subject: 'Confirm your email for rpcgate',
              text: `Welcome to rpcgate. Confirm that ${u.email} is yours to start creating apps and API keys — the link works once, for ${valid}:\n${link}\n\nIf you did not sign up, ignore this mail.\n`,
            },
      );
    };
    setImmediate(() =>
      send().catch((e: unknown) =>
        deps.logger?.error({ err: { message: (e as Error).message }, purpose }, 'account mail: token not issued'),
      ),
    );
  }

  return {
    async account_signUp([cred], c) {
      const email = store.normalizeEmail(cred.email);
      // Config `accounts.signup`: refused before any work when closed, or by invite and none was given. An email of
      // `accounts.admins` may always sign up: the first operator's account, from which invites are issued.
      const bootstrap = configAdmins.has(email);
      if (signup.mode === 'closed' && !bootstrap) throw SIGNUP_CLOSED;
      const invite = signup.mode === 'invite' && !bootstrap ? cred.invite : undefined;
      if (signup.mode === 'invite' && !bootstrap && invite === undefined) throw inviteRequired('missing');
      const rule = passwordRuleReason(cred.password, email);
      if (rule !== undefined) throw refused('credentials', '/0/password', rule);
      await throttle.beforeSignUp(c.ip); // before zxcvbn, which costs CPU on this thread
      if (invite !== undefined) {
        // A read for the refusal's words (before hashing): the transaction below decides.
        const why = await store.inviteRefusal(db, invite, email);
        if (why !== undefined) throw inviteRequired(why);
      }
      const weak = await passwordStrengthReason(cred.password, email);
      if (weak !== undefined) throw refused('credentials', '/0/password', weak);
      const passwordHash = await throttle.hash(() => hashPassword(cred.password));
      if (invite !== undefined) {
        const r = await store.signUpWithInvite(db, invite, { email, passwordHash, verified: !selfService.verifyEmail });
        if (!r.used) throw inviteRequired('invalid'); // used meanwhile (a concurrent sign-up), revoked or expired
        // A registered email: the same answer as a new one (no enumeration), its account unchanged, the invite unused.
        if ('user' in r) {
          if (selfService.verifyEmail) mailLink(r.user, 'verify', c.req.baseUrl);
          await audit(c, 'signed_up', { invite: r.inviteId }, r.user.id);
        }
        return { email, next: 'account_logIn' };
      }
      try {
        const u = await store.createUser(db, { email, passwordHash, verified: !selfService.verifyEmail });
        if (selfService.verifyEmail) mailLink(u, 'verify', c.req.baseUrl);
        await audit(c, 'signed_up', undefined, u.id);
      } catch (e) {
        // A registered email gets the same answer, after the same work, and its account is left unchanged: the
        // answer never tells whether an email has an account (no enumeration). The owner simply logs in.
        if (!(e instanceof store.ConflictError)) throw e;
      }
      return { email, next: 'account_logIn' };
    },
    async account_logIn([cred], c) {
      const email = store.normalizeEmail(cred.email);
      // A browser that logged in to this account before (device cookie) is not held to the per-email limit.
      const device = devices.verify(c.req.device, email);
      // A point is taken before the password is checked: concurrent calls cannot check more than the limit.
      const attempt = await throttle.beforeLogIn(email, c.ip, device).catch(async (e: unknown) => {
        await noteThrottled(e, email, c);
        throw e;
      });
      const u = await store.findUserByEmail(db, email);
      const stored = u?.passwordHash ?? (await dummy()); // unknown email: the same work as a wrong password
      const ok = await verifyCounted(attempt, stored, cred.password);
      if (u === undefined || !ok) throw BAD_CREDENTIALS;
      // Only after the password was right: the refusal tells nothing to whoever does not hold the account.
      if (u.suspended !== undefined) throw SUSPENDED;
      await throttle.loggedIn(attempt);
      const expiresAt = await startSession(c, u.id);
      c.req.setCookie.push(devices.issue(email, device, c.req.secure));
      await audit(c, 'logged_in', { trust: attempt.trust }, u.id);
      return { user: user(u), expiresAt: iso(expiresAt) };
    },
    async account_logOut(_p, c) {
      if (c.req.token !== undefined) await store.deleteSession(db, c.req.token);
      c.req.token = undefined;
      c.req.userId = Promise.resolve(undefined);
      c.req.setCookie.push(clearedSessionCookie(c.req.secure));
      return { loggedOut: true };
    },
    async account_me(_p, c) {
      const u = await store.getUser(db, c.userId);
      if (u === undefined) throw NO_SESSION; // deleted meanwhile
      return user(u);
    },
    async account_changePassword([chg], c) {
      const u = await checkOwnPassword(c, chg.currentPassword, 'change', '/0/currentPassword');
      if (chg.newPassword === chg.currentPassword)
        throw refused('change', '/0/newPassword', 'must differ from the current password');
      await checkNewPassword(chg.newPassword, u.email, 'change', '/0/newPassword');
      const passwordHash = await throttle.hash(() => hashPassword(chg.newPassword));
      await store.updatePasswordHash(db, u.id, passwordHash);
      // Whoever else holds a session (or a reset link) of this account loses it; this browser stays signed in.
      const otherSessionsEnded = await store.deleteUserSessions(db, u.id, c.req.token);
      await store.deleteAccountTokens(db, u.id, 'reset');
      await audit(c, 'password_changed', { otherSessionsEnded });
      return { changed: true, otherSessionsEnded };
    },
    async account_delete([conf], c) {
      const u = await checkOwnPassword(c, conf.password, 'confirm', '/0/password');
      await store.deleteUser(db, u.id, selfService.deletedUsage);
      c.req.token = undefined;
      c.req.userId = Promise.resolve(undefined);
      c.req.setCookie.push(clearedSessionCookie(c.req.secure));
      return { deleted: true, usage: selfService.deletedUsage === 'remove' ? 'removed' : 'anonymised' };
    },
    async account_requestPasswordReset([r], c) {
      const email = store.normalizeEmail(r.email);
      await throttle.beforePasswordReset(email, c.ip);
      const u = await store.findUserByEmail(db, email);
      if (u !== undefined) {
        mailLink(u, 'reset', c.req.baseUrl);
        await audit(c, 'password_reset_requested', undefined, u.id);
      }
      return { requested: true };
    },
    async account_resetPassword([r], c) {
      const userId = await store.findAccountToken(db, r.token, 'reset');
      const u = userId === undefined ? undefined : await store.getUser(db, userId);
      if (u === undefined) throw refused('reset', '/0/token', BAD_TOKEN);
      await checkNewPassword(r.newPassword, u.email, 'reset', '/0/newPassword');
      const passwordHash = await throttle.hash(() => hashPassword(r.newPassword));
      // Used in the statement that reads it: of two concurrent resets with one link, one wins.
      if ((await store.consumeAccountToken(db, r.token, 'reset')) !== u.id)
        throw refused('reset', '/0/token', BAD_TOKEN);
      await store.updatePasswordHash(db, u.id, passwordHash);
      await store.deleteUserSessions(db, u.id);
      await store.deleteAccountTokens(db, u.id, 'reset');
      await store.markEmailVerified(db, u.id); // the link reached the mailbox
      await audit(c, 'password_reset', undefined, u.id);
      if (c.req.token !== undefined) c.req.setCookie.push(clearedSessionCookie(c.req.secure));
      return { reset: true, next: 'account_logIn' };
    },
    async account_verifyEmail([v], c) {
      const userId = await store.consumeAccountToken(db, v.token, 'verify');
      if (userId === undefined) throw refused('verification', '/0/token', BAD_TOKEN);
      await store.markEmailVerified(db, userId);
      await audit(c, 'email_verified', undefined, userId);
      return { verified: true };
    },
    async account_activity([query], c) {
      const limit = query?.limit ?? 50;
      const rows = await store.listAudit(db, c.userId, {
        limit: limit + 1,
        before: query?.cursor === undefined ? undefined : Number(query.cursor),
      });
      const page = rows.slice(0, limit);
      return {
        entries: page.map((e) => ({
          time: iso(e.at),
          action: e.action,
          byOperator: e.actorId !== undefined && e.actorId !== e.userId,
          ...(e.ip === undefined ? {} : { ip: e.ip }),
          ...(e.detail === undefined ? {} : { detail: e.detail }),
        })),
        next: rows.length > limit ? String(page[page.length - 1].id) : null,
      };
    },
    async account_resendVerification(_p, c) {
      const u = await store.getUser(db, c.userId);
      if (u === undefined) throw NO_SESSION;
      if (u.emailVerifiedAt !== undefined) return { sent: false };
      await throttle.beforePasswordReset(u.email, c.ip);
      mailLink(u, 'verify', c.req.baseUrl);
      return { sent: true };
    },
    async account_alertWebhook(_p, c) {
      return { url: (await store.getAlertWebhookUrl(db, c.userId)) ?? null };
    },
    async account_setAlertWebhook([url], c) {
      if (url === null) {
        await store.setAlertWebhook(db, kit.secret, c.userId, undefined, Date.now());
        return { url: null };
      }
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {}
      if (parsed === undefined || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
        throw invalidParams('url must be an http(s) URL', { param: 'url', path: '/0', reason: 'not an http(s) URL' });
      // Public addresses only (unless the operator allows private ones): rpcgate POSTs from inside its network.
      const refusal = await webhookUrlRefusal(parsed, {
        allowPrivate: deps.allowPrivateWebhooks ?? false,
        lookup: deps.lookup,
      });
      if (refusal !== undefined) throw invalidParams(`url: ${refusal}`, { param: 'url', path: '/0', reason: refusal });
      // A new secret on every set: the caller sees it this once (the receiver verifies X-Rpcgate-Signature with it);
      // stored encrypted under the server secret.
      const secret = `whsec_${randomBytes(24).toString('base64url')}`;
      await store.setAlertWebhook(db, kit.secret, c.userId, { url: parsed.href, secret }, Date.now());
      return { url: parsed.href, secret };
    },
  };
}
