// Settings → the account's quota-alert webhook (account_alertWebhook / account_setAlertWebhook). The signing secret is
// shown once, right after saving; the receiver verifies X-Rpcgate-Signature with it (README "Quota alerts").
import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, describeError, type ShownError } from '../api.js';
import { ErrorText } from '../components.js';
import type { PageProps } from './Apps.js';

export function AlertWebhookSettings({ onUnauthorized }: PageProps) {
  const id = useId();
  const [url, setUrl] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api.request('account_alertWebhook').then(
      (h) => {
        setSaved(h.url);
        setUrl(h.url ?? '');
      },
      (e) => onUnauthorized(e) || setError(describeError(e)),
    );
  }, [onUnauthorized]);

  const save = async (next: string | null) => {
    setBusy(true);
    setError(null);
    try {
      const h = await api.request('account_setAlertWebhook', [next]);
      setSaved(h.url);
      setSecret(h.secret ?? null);
      if (h.url === null) setUrl('');
    } catch (e) {
      if (!onUnauthorized(e)) setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save(url.trim());
  };

  return (
    <section aria-labelledby={`${id}-title`} className="stack">
      <form onSubmit={submit} className="card" noValidate>
        <h2 id={`${id}-title`}>Quota alert webhook</h2>
        <p className="muted">
          At 75 %, 90 % and 100 % of a daily or monthly quota rpcgate POSTs a signed JSON alert here (header
          X-Rpcgate-Signature: sha256=HMAC of "timestamp.body"), once per threshold and period. The URL must reach a
          public address: loopback, private and link-local addresses are refused.
        </p>
        <div className="field">
          <label htmlFor={`${id}-url`}>Webhook URL</label>
          <input
            id={`${id}-url`}
            type="url"
            placeholder="https://hooks.example.com/rpcgate"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            aria-invalid={error?.field !== undefined || undefined}
          />
        </div>
        <ErrorText error={error} />
        {secret !== null && (
          <p className="notice" data-testid="webhook-secret">
            Signing secret (shown once): <code>{secret}</code>
          </p>
        )}
        <div className="row">
          <button type="submit" className="btn btn-primary" disabled={busy}>
            Save webhook
          </button>
          {saved !== null && (
            <button type="button" className="btn" disabled={busy} onClick={() => void save(null)}>
              Remove webhook
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
