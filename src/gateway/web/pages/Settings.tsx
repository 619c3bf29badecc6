// The account's own settings (#/settings): the email and whether it is verified, changing the password (the current
// one required; other sessions end), the quota-alert webhook (./AlertWebhook.tsx), the account's security activity
// (account_activity), and deleting the account.
import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, describeError, type ActivityEntry, type ShownError, type User } from '../api.js';
import { ErrorText, formatDate, Notice } from '../components.js';
import { AlertWebhookSettings } from './AlertWebhook.js';

export function SettingsPage({
  user,
  onDeleted,
  onUnauthorized,
}: {
  user: User;
  onDeleted: () => void;
  onUnauthorized: (e: unknown) => boolean;
}) {
  return (
    <section aria-labelledby="settings-title" className="stack">
      <h1 id="settings-title" tabIndex={-1}>
        Account settings
      </h1>
      <div className="card stack">
        <p>
          Signed in as <strong data-testid="settings-email">{user.email}</strong>, member since{' '}
          {formatDate(user.createdAt)}.
        </p>
        {!user.emailVerified && <VerifyReminder fail={onUnauthorized} />}
      </div>
      <ChangePassword fail={onUnauthorized} />
      <AlertWebhookSettings onUnauthorized={onUnauthorized} />
      <Activity fail={onUnauthorized} />
      <DeleteAccount onDeleted={onDeleted} fail={onUnauthorized} />
    </section>
  );
}

/** Shown while the email is not verified (config `accounts.verifyEmail`): a new link on request. */
export function VerifyReminder({ fail }: { fail: (e: unknown) => boolean }) {
  const [state, setState] = useState<'idle' | 'sent' | ShownError>('idle');
  return (
    <div className="notice" role="status" data-testid="verify-reminder">
      Confirm your email to create apps and API keys: follow the link we mailed you.{' '}
      {state === 'sent' ? (
        'A new link is on its way.'
      ) : (
        <button
          type="button"
          className="btn btn-small"
          onClick={() =>
            api.request('account_resendVerification').then(
              () => setState('sent'),
              (e) => fail(e) || setState(describeError(e)),
            )
          }
        >
          Send a new link
        </button>
      )}
      {typeof state === 'object' && <ErrorText error={state} />}
    </div>
  );
}

function ChangePassword({ fail }: { fail: (e: unknown) => boolean }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const [done, setDone] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const currentId = useId();
  const nextId = useId();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const r = await api.request('account_changePassword', [{ currentPassword: current, newPassword: next }]);
      setDone(r.otherSessionsEnded);
      setCurrent('');
      setNext('');
    } catch (err) {
      if (!fail(err)) setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card stack" aria-labelledby="pw-title">
      <h2 id="pw-title">Change password</h2>
      <form onSubmit={submit} noValidate className="stack">
        <div className="field">
          <label htmlFor={currentId}>Current password</label>
          <input
            id={currentId}
            type="password"
            autoComplete="current-password"
            required
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
            aria-invalid={error?.field?.endsWith('currentPassword') || undefined}
          />
        </div>
        <div className="field">
          <label htmlFor={nextId}>New password</label>
          <input
            id={nextId}
            type="password"
            autoComplete="new-password"
            required
            minLength={8}
            value={next}
            onChange={(e) => setNext(e.target.value)}
            aria-invalid={error?.field?.endsWith('newPassword') || undefined}
          />
        </div>
        <ErrorText error={error} />
        {done !== null && (
          <Notice>
            Password changed.{' '}
            {done === 0
              ? 'No other session was open.'
              : `${done} other ${done === 1 ? 'session was' : 'sessions were'} signed out.`}
          </Notice>
        )}
        <div>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Please wait…' : 'Change password'}
          </button>
        </div>
      </form>
    </section>
  );
}

function DeleteAccount({ onDeleted, fail }: { onDeleted: () => void; fail: (e: unknown) => boolean }) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.request('account_delete', [{ password }]);
      onDeleted();
    } catch (err) {
      if (!fail(err)) setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card danger-zone stack" aria-labelledby="delacct-title">
      <h2 id="delacct-title">Delete account</h2>
      <p className="muted">
        Deletes your account, every app and API key (they stop working within seconds) and your request logs. This
        cannot be undone.
      </p>
      <form onSubmit={submit} noValidate className="stack">
        <div className="field">
          <label htmlFor={id}>Your password, to confirm</label>
          <input
            id={id}
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </div>
        <ErrorText error={error} />
        <div>
          <button type="submit" className="btn btn-danger" disabled={busy || password === ''}>
            {busy ? 'Deleting…' : 'Delete my account permanently'}
          </button>
        </div>
      </form>
    </section>
  );
}

export const ACTION_LABELS: Record<ActivityEntry['action'], string> = {
  logged_in: 'Logged in',
  login_throttled: 'Failed log-ins hit the limit',
  password_changed: 'Password changed',
  password_reset: 'Password reset by mailed link',
  password_reset_requested: 'Password reset requested',
  email_verified: 'Email verified',
  app_created: 'App created',
  app_key_rotated: 'App key rotated',
  app_deleted: 'App deleted',
  key_created: 'API key created',
  key_deleted: 'API key deleted',
  suspended: 'Account suspended by an operator',
  unsuspended: 'Suspension lifted by an operator',
  plan_changed: 'Plan changed by an operator',
  admin_granted: 'Admin role granted',
  signed_up: 'Account created',
  invite_created: 'Invite issued',
  invite_revoked: 'Invite revoked',
  admin_revoked: 'Admin role taken back',
};

/** What the detail of an entry names (an app or key by name, else its id; a throttle's scope). */
export function detailText(d: ActivityEntry['detail']): string {
  if (d === undefined) return '';
  const name = typeof d.name === 'string' ? d.name : (d.appId ?? d.keyId);
  const parts = [name, d.network, d.scope, d.reason, d.plan, d.email].filter((x) => typeof x === 'string');
  return parts.join(' · ');
}

function Activity({ fail }: { fail: (e: unknown) => boolean }) {
  const [entries, setEntries] = useState<ActivityEntry[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    api.request('account_activity', [{ limit: 20 }]).then(
      (p) => setEntries(p.entries),
      (e) => fail(e) || setError(describeError(e)),
    );
  }, [fail]);
  return (
    <section className="card stack" aria-labelledby="activity-title">
      <h2 id="activity-title">Security activity</h2>
      <ErrorText error={error} />
      {entries === null ? (
        !error && <p className="muted">Loading…</p>
      ) : entries.length === 0 ? (
        <p className="muted">Nothing yet.</p>
      ) : (
        <table className="table" data-testid="activity-table">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">Detail</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={`${e.time}-${e.action}-${detailText(e.detail)}`}>
                <td>{formatDate(e.time)}</td>
                <td>
                  {ACTION_LABELS[e.action]}
                  {e.byOperator ? ' (by an operator)' : ''}
                </td>
                <td>{detailText(e.detail)}</td>
                <td className="mono">{e.ip ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
