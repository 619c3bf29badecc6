// Sign up (free) and log in: one form, errors inline next to the field the server named.
import { useId, useState, type FormEvent } from 'react';
import { api, describeError, type ShownError, type User } from '../api.js';
import { ErrorText } from '../components.js';
import { href } from '../router.js';

export function AuthPage({ mode, onSignedIn }: { mode: 'signup' | 'login'; onSignedIn: (u: User) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const emailId = useId();
  const passwordId = useId();
  const errorId = useId();
  const signup = mode === 'signup';

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Sign-up answers alike for new and registered emails and starts no session: the log-in that follows does.
      if (signup) await api.request('account_signUp', [{ email, password }]);
      const s = await api.request('account_logIn', [{ email, password }]);
      onSignedIn(s.user);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const emailBad = error?.field?.includes('email');
  const passwordBad = error?.field?.includes('password');

  return (
    <section className="auth-card card" aria-labelledby="auth-title">
      <h1 id="auth-title" tabIndex={-1}>
        {signup ? 'Create your free account' : 'Log in'}
      </h1>
      <p className="muted">
        {signup
          ? 'Sign up is free. You get apps and API keys for every network of this service.'
          : 'Welcome back. Log in to manage your apps and API keys.'}
      </p>
      <form onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={emailId}>Email</label>
          <input
            id={emailId}
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            aria-invalid={emailBad || undefined}
            aria-describedby={error ? errorId : undefined}
          />
        </div>
        <div className="field">
          <label htmlFor={passwordId}>Password</label>
          <input
            id={passwordId}
            type="password"
            autoComplete={signup ? 'new-password' : 'current-password'}
            required
            minLength={signup ? 8 : undefined}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            aria-invalid={passwordBad || undefined}
            aria-describedby={[signup ? `${passwordId}-hint` : '', error ? errorId : ''].join(' ').trim() || undefined}
          />
          {signup && (
            <p className="hint" id={`${passwordId}-hint`}>
              8 to 128 characters, not a common or easily guessed password (a few unrelated words work well).
            </p>
          )}
        </div>
        <ErrorText error={error} id={errorId} />
        <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
          {busy ? 'Please wait…' : signup ? 'Sign up' : 'Log in'}
        </button>
      </form>
      <p className="auth-switch">
        {signup ? (
          <>
            Already have an account? <a href={href('login')}>Log in</a>
          </>
        ) : (
          <>
            New here? <a href={href('signup')}>Sign up for free</a> · <a href={href('forgot')}>Forgot your password?</a>
          </>
        )}
      </p>
    </section>
  );
}
