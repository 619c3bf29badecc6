// The account API's `account_…` methods (contracts/account.openrpc.json); ./index.ts merges the namespaces.
// Sign-up, log-in (throttled, device cookies), log-out, the session's user.
import { randomBytes } from 'node:crypto';
import { invalidParams } from '@rpcgate/toolkit/errors';
import { hashPassword, verifyPassword } from '../../secrets/index.js';
import { passwordRuleReason, passwordStrengthReason } from '../../secrets/password-policy.js';
import * as store from '../../store/index.js';
import { BAD_CREDENTIALS, NO_SESSION } from '../errors.js';
import { clearedSessionCookie } from '../session.js';
import { iso, type Kit, type Namespace } from './kit.js';

export function accountHandlers(kit: Kit): Namespace<'account'> {
  const { db, throttle, devices, dummy, user, startSession } = kit;
  return {
    async account_signUp([cred], c) {
      const email = store.normalizeEmail(cred.email);
      const weakPassword = (reason: string) =>
        invalidParams(`password ${reason}`, { param: 'credentials', path: '/0/password', reason });
      const rule = passwordRuleReason(cred.password, email);
      if (rule !== undefined) throw weakPassword(rule);
      await throttle.beforeSignUp(c.ip); // before zxcvbn, which costs CPU on this thread
      const weak = await passwordStrengthReason(cred.password, email);
      if (weak !== undefined) throw weakPassword(weak);
      const passwordHash = await throttle.hash(() => hashPassword(cred.password));
      try {
        await store.createUser(db, { email, passwordHash });
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
      const attempt = await throttle.beforeLogIn(email, c.ip, device);
      const u = await store.findUserByEmail(db, email);
      const stored = u?.passwordHash ?? (await dummy()); // unknown email: the same work as a wrong password
      let ok: boolean;
      try {
        ok = await throttle.hash(() => verifyPassword(stored, cred.password), attempt.trust !== 'none');
      } catch (e) {
        await throttle.refundLogIn(attempt); // refused by the hashing gate: nothing was checked
        throw e;
      }
      if (u === undefined || !ok) throw BAD_CREDENTIALS;
      await throttle.loggedIn(attempt);
      const expiresAt = await startSession(c, u.id);
      c.req.setCookie.push(devices.issue(email, device, c.req.secure));
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
    async account_alertWebhook(_p, c) {
      const hook = await store.getAlertWebhook(db, c.userId);
      return { url: hook?.url ?? null };
    },
    async account_setAlertWebhook([url], c) {
      if (url === null) {
        await store.setAlertWebhook(db, c.userId, undefined, Date.now());
        return { url: null };
      }
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {}
      if (parsed === undefined || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
        throw invalidParams('url must be an http(s) URL', { param: 'url', path: '/0', reason: 'not an http(s) URL' });
      // A new secret on every set: the caller sees it this once (the receiver verifies X-Rpcgate-Signature with it).
      const secret = `whsec_${randomBytes(24).toString('base64url')}`;
      await store.setAlertWebhook(db, c.userId, { url: parsed.href, secret }, Date.now());
      return { url: parsed.href, secret };
    },
  };
}
