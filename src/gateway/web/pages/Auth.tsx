// Sign up (free) and log in: one form, errors inline next to the field the server named. The sign-up page shows the
// deployment's sign-up mode (account_signUpMode): closed — says so, no form; invite — takes the invite from the link
// (`/signup?invite=<token>` lands on `#/signup/<token>`) or asks for it.
import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, describeError, type ShownError, type User } from '../api.js';
import { ErrorText } from '../components.js';
import { href } from '../router.js';

/** The token of an invite link or the token itself (pasted into the form). */
function inviteToken(s: string): string {
  const t = s.trim();
  const m = /[?&]invite=([A-Za-z0-9_-]+)/.exec(t) ?? /#\/signup\/([A-Za-z0-9_-]+)/.exec(t);
  return m ? m[1] : t;
}

type SignUpMode = 'open' | 'invite' | 'closed';

export function AuthPage({
  mode,
  onSignedIn,
  invite: linkInvite,
}: {
  mode: 'signup' | 'login';
  onSignedIn: (u: User) => void;
  /** The invite token from the link, when the page was opened with one. */
  invite?: string;
}) {
  const [email, setEmail] = useState('');
  const [invite, setInvite] = useState(linkInvite ?? '');
  const [signUpMode, setSignUpMode] = useState<SignUpMode | undefined>();
  const inviteId = useId();
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const emailId = useId();
  const passwordId = useId();
  const errorId = useId();
  const signup = mode === 'signup';

  useEffect(() => {
    if (!signup) return;
    api.request('account_signUpMode').then(
      (r) => setSignUpMode(r.mode),
      () => setSignUpMode('open'), // unknown: the form, and the server's refusal if any
    );
  }, [signup]);
  useEffect(() => setInvite(linkInvite ?? ''), [linkInvite]);
  const byInvite = signUpMode === 'invite';

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Sign-up answers alike for new and registered emails and starts no session: the log-in that follows does.
      if (signup) {
        const token = byInvite && invite.trim() !== '' ? inviteToken(invite) : undefined;
        await api.request('account_signUp', [{ email, password, ...(token === undefined ? {} : { invite: token }) }]);
      }
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
  const inviteBad = error?.field?.includes('invite') || (error?.message ?? '').toLowerCase().includes('invite');

  if (signup && signUpMode === 'closed')
    return (
      <section className="auth-card card" aria-labelledby="auth-title">
        <h1 id="auth-title" tabIndex={-1}>
          Sign-up is closed
        </h1>
        <p data-testid="signup-mode">
          This service does not take new accounts: its operators create them. If you already have an account,{' '}
          <a href={href('login')}>log in</a>.
        </p>
      </section>
    );

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
      {signup && byInvite && (
        <p className="notice" data-testid="signup-mode">
          {linkInvite
            ? 'Sign-up here is by invite: your invite link is filled in below. It works once.'
            : 'Sign-up here is by invite only: paste the invite link an admin sent you.'}
        </p>
      )}
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
        {signup && byInvite && (
          <div className="field">
            <label htmlFor={inviteId}>Invite link</label>
            <input
              id={inviteId}
              type="text"
              autoComplete="off"
              required
              value={invite}
              onChange={(e) => setInvite(e.target.value)}
              aria-invalid={inviteBad || undefined}
              aria-describedby={error ? errorId : undefined}
            />
          </div>
        )}
        <ErrorText error={error} id={errorId} />
        <button type="submit" className="btn btn-primary btn-block" disabled={busy || (signup && !signUpMode)}>
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
