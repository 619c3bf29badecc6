// Account recovery without a session: ask for a password-reset link (#/forgot), set a new password from the mailed
// link (#/reset/<token>), confirm the email from its link (#/verify/<token>). The token lives in the URL's fragment,
// which browsers never send to a server (no Referer, no access log holds it).
import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, describeError, type ShownError } from '../api.js';
import { ErrorText, Notice } from '../components.js';
import { href } from '../router.js';

export function ForgotPage() {
  const [email, setEmail] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.request('account_requestPasswordReset', [{ email }]);
      setSent(true);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="auth-card card" aria-labelledby="forgot-title">
      <h1 id="forgot-title" tabIndex={-1}>
        Reset your password
      </h1>
      {sent ? (
        <Notice>
          If an account exists for {email}, we have sent it a link to set a new password. Check your inbox (the link
          works once, for a limited time).
        </Notice>
      ) : (
        <form onSubmit={submit} noValidate>
          <p className="muted">Enter the email of your account and we will mail you a link to set a new password.</p>
          <div className="field">
            <label htmlFor={id}>Email</label>
            <input
              id={id}
              type="email"
              autoComplete="email"
              required
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
          </div>
          <ErrorText error={error} />
          <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
            {busy ? 'Please wait…' : 'Send reset link'}
          </button>
        </form>
      )}
      <p className="auth-switch">
        Remembered it? <a href={href('login')}>Log in</a>
      </p>
    </section>
  );
}

export function ResetPage({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.request('account_resetPassword', [{ token, newPassword: password }]);
      setDone(true);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="auth-card card" aria-labelledby="reset-title">
      <h1 id="reset-title" tabIndex={-1}>
        Set a new password
      </h1>
      {done ? (
        <Notice>
          Your password was changed and every session of your account was ended.{' '}
          <a href={href('login')}>Log in with your new password</a>.
        </Notice>
      ) : (
        <form onSubmit={submit} noValidate>
          <div className="field">
            <label htmlFor={id}>New password</label>
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              required
              minLength={8}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-invalid={error ? true : undefined}
            />
            <p className="hint">8 to 128 characters, not a common or easily guessed password.</p>
          </div>
          <ErrorText error={error} />
          {error?.field?.endsWith('/token') && (
            <p>
              <a href={href('forgot')}>Ask for a new link</a>
            </p>
          )}
          <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
            {busy ? 'Please wait…' : 'Set new password'}
          </button>
        </form>
      )}
    </section>
  );
}

/** One call per token: the token is single-use, and an effect may run twice (React's StrictMode in development). */
const verifying = new Map<string, Promise<unknown>>();

export function VerifyPage({ token, signedIn }: { token: string; signedIn: boolean }) {
  const [state, setState] = useState<'checking' | 'verified' | ShownError>('checking');
  useEffect(() => {
    let call = verifying.get(token);
    if (call === undefined) verifying.set(token, (call = api.request('account_verifyEmail', [{ token }])));
    call.then(
      () => setState('verified'),
      (err) => setState(describeError(err)),
    );
  }, [token]);
  return (
    <section className="auth-card card" aria-labelledby="verify-title">
      <h1 id="verify-title" tabIndex={-1}>
        Confirm your email
      </h1>
      {state === 'checking' ? (
        <p className="muted">Checking the link…</p>
      ) : state === 'verified' ? (
        <Notice>
          Your email is confirmed: you can create apps and API keys now.{' '}
          <a href={href(signedIn ? 'apps' : 'login')}>{signedIn ? 'Go to your apps' : 'Log in'}</a>
        </Notice>
      ) : (
        <ErrorText error={state} />
      )}
    </section>
  );
}
