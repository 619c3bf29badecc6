// API keys (access point B): the list with today's usage against the daily limit, New API key, the key detail view.
import { useEffect, useId, useState, type FormEvent } from 'react';
import {
  api,
  describeError,
  type ChainNetwork,
  type DailyUsage,
  type NetworkKeyDetail,
  type NetworkKeyList,
  type ShownError,
} from '../api.js';
import { ConfirmAction, CopyField, ErrorText, fmt, formatDate, UsageMeter } from '../components.js';
import { href, navigate } from '../router.js';
import type { PageProps } from './Apps.js';
import { Examples } from './AppDetail.js';
import { KeyUsageChart } from './Metrics.js';

/** Today's requests against the per-user daily limit (from the limiter, through keys_list). */
function Usage({ usage, lead = '' }: { usage: DailyUsage; lead?: string }) {
  return (
    <div className="usage" data-testid="usage">
      <div className="usage-text">
        {lead}
        <strong data-testid="usage-used">{fmt(usage.used)}</strong> of {fmt(usage.limit)} requests today
        <span className="muted small"> · resets {formatDate(usage.resetAt)}</span>
      </div>
      <UsageMeter
        label="Requests today"
        used={usage.used}
        limit={usage.limit}
        text={`${fmt(usage.used)} of ${fmt(usage.limit)}`}
      />
    </div>
  );
}

export function KeysPage({ onUnauthorized }: PageProps) {
  const [list, setList] = useState<NetworkKeyList | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    api.request('keys_list').then(setList, (e) => onUnauthorized(e) || setError(describeError(e)));
  }, [onUnauthorized]);

  return (
    <section aria-labelledby="keys-title">
      <div className="page-head">
        <div>
          <h1 id="keys-title" tabIndex={-1}>
            API keys
          </h1>
          <p className="muted">
            Each key works on one network: <span className="mono">/&#123;network&#125;/&lt;key&gt;</span>. Up to{' '}
            {list?.maxKeys ?? 4} keys; the daily limit is shared by all your keys.
          </p>
        </div>
        <a className="btn btn-primary" href={href('keys', 'new')}>
          New API key
        </a>
      </div>
      <ErrorText error={error} />
      {list && (
        <>
          <div className="card">
            <Usage usage={list.usage} />
          </div>
          {list.keys.length === 0 ? (
            <div className="empty card">
              <h2>No API keys yet</h2>
              <p>Create a key for Mainnet or Testnet to call the node API.</p>
            </div>
          ) : (
            <div className="table-wrap card">
              <table className="table">
                <caption className="visually-hidden">Your API keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Network</th>
                    <th scope="col">Description</th>
                    <th scope="col">Created</th>
                    <th scope="col" className="num">
                      Calls today
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.keys.map((k) => (
                    <tr key={k.id}>
                      <th scope="row">
                        <a href={href('keys', k.id)}>{k.name}</a>
                      </th>
                      <td>
                        <span className={`pill pill-${k.network}`}>{k.networkLabel}</span>
                      </td>
                      <td className="muted">{k.description || '—'}</td>
                      <td className="muted nowrap">{formatDate(k.createdAt)}</td>
                      <td className="num" data-testid={`key-today-${k.id}`}>
                        {fmt(k.today.total)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <p className="muted small" data-testid="key-count">
            {list.keys.length} of {list.maxKeys} keys used.
          </p>
        </>
      )}
    </section>
  );
}

export function NewKeyPage({ onUnauthorized }: PageProps) {
  const [name, setName] = useState('');
  // The deployment's networks (networks_list, from its config); a test network is the safer default when there is one.
  const [networks, setNetworks] = useState<ChainNetwork[] | null>(null);
  const [network, setNetwork] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const ids = { name: useId(), description: useId(), error: useId() };
  useEffect(() => {
    api.request('networks_list').then(
      (list) => {
        setNetworks(list);
        setNetwork((cur) => cur || (list.find((n) => n.network === 'testnet') ?? list[0])?.network || '');
      },
      (err) => onUnauthorized(err) || setError(describeError(err)),
    );
  }, [onUnauthorized]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const k = await api.request('keys_create', [{ name, network, description: description || undefined }]);
      navigate('keys', k.id);
    } catch (err) {
      if (!onUnauthorized(err)) setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="newkey-title" className="narrow">
      <p className="crumbs">
        <a href={href('keys')}>API keys</a> <span aria-hidden="true">/</span> New
      </p>
      <h1 id="newkey-title" tabIndex={-1}>
        New API key
      </h1>
      <form onSubmit={submit} className="card" noValidate>
        <div className="field">
          <label htmlFor={ids.name}>
            Name <span className="req">(required)</span>
          </label>
          <input
            id={ids.name}
            required
            maxLength={64}
            value={name}
            onChange={(e) => setName(e.target.value)}
            aria-invalid={error?.field?.endsWith('/name') || undefined}
          />
        </div>
        <fieldset className="field">
          <legend>
            Network <span className="req">(required)</span>
          </legend>
          <div className="row">
            {networks === null && <span className="muted">Loading networks…</span>}
            {networks?.map((n) => (
              <label
                key={n.network}
                className={`choice choice-inline${network === n.network ? ' choice-selected' : ''}`}
              >
                <input
                  type="radio"
                  name="network"
                  value={n.network}
                  checked={network === n.network}
                  onChange={() => setNetwork(n.network)}
                />
                <span>{n.label}</span>
              </label>
            ))}
          </div>
        </fieldset>
        <div className="field">
          <label htmlFor={ids.description}>Description</label>
          <textarea
            id={ids.description}
            rows={2}
            maxLength={500}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
        </div>
        <ErrorText error={error} id={ids.error} />
        <div className="row">
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create API key'}
          </button>
          <a className="btn" href={href('keys')}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}

export function KeyDetailPage({ keyId, onUnauthorized }: PageProps & { keyId: string }) {
  const [key, setKey] = useState<NetworkKeyDetail | null>(null);
  const [usage, setUsage] = useState<DailyUsage | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    api.request('keys_get', [keyId]).then(setKey, (e) => onUnauthorized(e) || setError(describeError(e)));
    api.request('keys_list').then(
      (l) => setUsage(l.usage),
      () => undefined,
    );
  }, [keyId, onUnauthorized]);

  if (error && !key)
    return (
      <section>
        <h1 tabIndex={-1}>API key not available</h1>
        <ErrorText error={error} />
        <a href={href('keys')}>Back to your API keys</a>
      </section>
    );
  if (!key) return <p className="muted">Loading key…</p>;
  return (
    <section aria-labelledby="key-title" className="stack">
      <p className="crumbs">
        <a href={href('keys')}>API keys</a> <span aria-hidden="true">/</span> {key.name}
      </p>
      <div className="page-head">
        <div>
          <h1 id="key-title" tabIndex={-1}>
            {key.name}
          </h1>
          <p className="muted">
            <span className={`pill pill-${key.network}`}>{key.networkLabel}</span> created {formatDate(key.createdAt)}
            {key.description ? ` · ${key.description}` : ''}
          </p>
        </div>
      </div>
      <div className="card stack">
        <CopyField label="RPC URL" value={key.url} testId="key-url" />
        <CopyField label="API key" value={key.key} testId="key-key" />
      </div>
      <section className="card stack" aria-labelledby="usage-title">
        <h2 id="usage-title">Usage</h2>
        <p className="usage-text" data-testid="key-today">
          Today: <strong data-testid="key-today-total">{fmt(key.today.total)}</strong>{' '}
          {key.today.total === 1 ? 'call' : 'calls'} on this key
          {key.today.total > 0 && <span className="muted"> ({fmt(key.today.success)} successful)</span>}
          <span className="muted small"> · UTC day, counted up to a few seconds ago</span>
        </p>
        {usage ? <Usage usage={usage} lead="Your daily limit: used " /> : <p className="muted">Loading usage…</p>}
        <p className="muted small">The daily limit is per user: it counts the requests of all your API keys.</p>
        <KeyUsageChart keyId={key.id} fail={onUnauthorized} />
      </section>
      <section aria-labelledby="ex-title">
        <h2 id="ex-title">Examples</h2>
        <Examples urls={{ [key.network]: key.url }} />
      </section>
      <section className="card danger-zone" aria-labelledby="del-title">
        <h2 id="del-title">Delete key</h2>
        <p className="muted">The key stops working within seconds.</p>
        <ConfirmAction
          label="Delete API key"
          confirmLabel="Delete key permanently"
          question={<>Delete “{key.name}”? Requests with it will be refused.</>}
          onConfirm={async () => {
            try {
              await api.request('keys_delete', [key.id]);
              navigate('keys');
            } catch (err) {
              setError(describeError(err));
            }
          }}
        />
        <ErrorText error={error} />
      </section>
    </section>
  );
}
