// The account API's generated client as a browser would use it: one origin, the session cookie kept between calls.
import { createClient, type AccountClient } from '../../generated/account/client.js';
import type { RunningService } from '../../src/gateway/server/index.js';

/** A fetch that keeps the session cookie, as a browser does for one origin (the generated client takes `fetch`). */
export function cookieFetch(): typeof fetch {
  let cookie = '';
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(input, { ...init, headers });
    for (const sc of res.headers.getSetCookie()) {
      const pair = sc.split(';')[0];
      if (pair.startsWith('rpcgate_session=')) cookie = pair === 'rpcgate_session=' ? '' : pair;
    }
    return res;
  };
}

export const account = (svc: RunningService): AccountClient =>
  createClient({ url: `${svc.url}/api`, fetch: cookieFetch() });

/** Signs up (no session: the answer is the same for a registered email) and logs in, as the dashboard does. */
export async function signUpAndLogIn(api: AccountClient, cred: { email: string; password: string }) {
  await api.request('account_signUp', [cred]);
  return api.request('account_logIn', [cred]);
}
