// Apps (access point A): the list and the Create app form (name, description, use case, chain by search, services).
import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, describeError, type AppSummary, type AppsUsage, type Chain, type ShownError } from '../api.js';
import { ErrorText, fmt, formatDate, UsageMeter } from '../components.js';
import { href, navigate } from '../router.js';

export interface PageProps {
  /** Handles a lost session (returns true when it did). */
  onUnauthorized: (e: unknown) => boolean;
}

const SERVICES: { id: 'node-api'; label: string; hint: string }[] = [
  { id: 'node-api', label: 'Node API', hint: 'JSON-RPC reads of blocks, transactions, logs and balances' },
];

/** The account's quotas (apps_usage): shared by all apps, so shown once for the account, never per app. */
function AccountQuotas({ usage }: { usage: AppsUsage }) {
  const label = (p: string) => (p === 'day' ? 'today' : 'this month');
  return (
    <div className="card stack" data-testid="app-quotas">
      {usage.quotas.map((q) => (
        <div className="usage" key={q.period} data-testid={`app-quota-${q.period}`}>
          <div className="usage-text">
            <strong data-testid={`app-quota-${q.period}-used`}>{fmt(q.used)}</strong> of {fmt(q.limit)} requests{' '}
            {label(q.period)}, all your apps together
            <span className="muted small"> · resets {formatDate(q.resetAt)}</span>
          </div>
          <UsageMeter
            label={`Requests ${label(q.period)}`}
            used={q.used}
            limit={q.limit}
            text={`${fmt(q.used)} of ${fmt(q.limit)}`}
          />
        </div>
      ))}
      <p className="muted small">
        The daily and monthly quotas belong to your account: more apps do not add quota.{' '}
        {usage.perSecond !== null && <>Each app has its own rate of {fmt(usage.perSecond)} requests per second. </>}
        {usage.apps} of {usage.maxApps} apps.
      </p>
    </div>
  );
}

export function AppsPage({ onUnauthorized }: PageProps) {
  const [apps, setApps] = useState<AppSummary[] | null>(null);
  const [usage, setUsage] = useState<AppsUsage | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    api.request('apps_list').then(setApps, (e) => onUnauthorized(e) || setError(describeError(e)));
    api.request('apps_usage').then(setUsage, (e) => onUnauthorized(e) || setError(describeError(e)));
  }, [onUnauthorized]);

  return (
    <section aria-labelledby="apps-title">
      <div className="page-head">
        <div>
          <h1 id="apps-title" tabIndex={-1}>
            Apps
          </h1>
          <p className="muted">
            Each app has one API key that works on its chain's networks:{' '}
            <span className="mono">/&#123;network&#125;/v2/&lt;key&gt;</span>.
          </p>
        </div>
        <a className="btn btn-primary" href={href('apps', 'new')}>
          Create app
        </a>
      </div>
      <ErrorText error={error} />
      {usage && <AccountQuotas usage={usage} />}
      {apps === null && !error && <p className="muted">Loading apps…</p>}
      {apps?.length === 0 && (
        <div className="empty card">
          <h2>No apps yet</h2>
          <p>Create an app to get an API key and an RPC URL for each network of its chain.</p>
          <a className="btn btn-primary" href={href('apps', 'new')}>
            Create your first app
          </a>
        </div>
      )}
      {apps && apps.length > 0 && (
        <ul className="card-list" aria-label="Your apps">
          {apps.map((a) => (
            <li key={a.id} className="card app-card">
              <h2>
                <a href={href('apps', a.id)}>{a.name}</a>
              </h2>
              {a.description && <p className="muted">{a.description}</p>}
              <dl className="facts">
                <div>
                  <dt>Chain</dt>
                  <dd>{a.chain}</dd>
                </div>
                <div>
                  <dt>Use case</dt>
                  <dd>{a.useCase}</dd>
                </div>
                <div>
                  <dt>Networks</dt>
                  <dd>{a.networks.join(', ') || 'none'}</dd>
                </div>
                <div>
                  <dt>Created</dt>
                  <dd>{formatDate(a.createdAt)}</dd>
                </div>
              </dl>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function CreateAppPage({ onUnauthorized }: PageProps) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [useCase, setUseCase] = useState('');
  const [useCases, setUseCases] = useState<string[]>([]);
  const [query, setQuery] = useState('');
  const [chains, setChains] = useState<Chain[] | null>(null);
  const [chain, setChain] = useState('');
  const [services, setServices] = useState<string[]>(['node-api']);
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const ids = {
    name: useId(),
    description: useId(),
    useCase: useId(),
    useCases: useId(),
    search: useId(),
    error: useId(),
  };

  useEffect(() => {
    api.request('useCases_list').then(setUseCases, (e) => onUnauthorized(e));
  }, [onUnauthorized]);

  // The chain search: chains_list with the query, a little after typing stops.
  useEffect(() => {
    let live = true;
    const t = window.setTimeout(() => {
      api.request('chains_list', query.trim() ? [query.trim()] : []).then(
        (cs) => live && setChains(cs),
        (e) => live && (onUnauthorized(e) || setError(describeError(e))),
      );
    }, 150);
    return () => {
      live = false;
      window.clearTimeout(t);
    };
  }, [query, onUnauthorized]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (!chain) return setError({ message: 'Choose a chain: search for it and select it.', field: '/0/chain' });
    if (services.length === 0) return setError({ message: 'Choose at least one service.', field: '/0/services' });
    setBusy(true);
    try {
      const app = await api.request('apps_create', [
        { name, description: description || undefined, useCase, chain, services: services as ['node-api'] },
      ]);
      navigate('apps', app.id, 'setup');
    } catch (err) {
      if (!onUnauthorized(err)) setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const bad = (f: string) => (error?.field?.endsWith(`/${f}`) ? true : undefined);

  return (
    <section aria-labelledby="create-title" className="narrow">
      <p className="crumbs">
        <a href={href('apps')}>Apps</a> <span aria-hidden="true">/</span> New
      </p>
      <h1 id="create-title" tabIndex={-1}>
        Create app
      </h1>
      <form onSubmit={submit} className="card" noValidate aria-describedby={error ? ids.error : undefined}>
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
            aria-invalid={bad('name')}
            placeholder="e.g. Price dashboard"
          />
        </div>
        <div className="field">
          <label htmlFor={ids.description}>Description</label>
          <textarea
            id={ids.description}
            maxLength={500}
            rows={3}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            aria-invalid={bad('description')}
          />
        </div>
        <div className="field">
          <label htmlFor={ids.useCase}>
            Use case <span className="req">(required)</span>
          </label>
          <input
            id={ids.useCase}
            list={ids.useCases}
            required
            maxLength={64}
            value={useCase}
            onChange={(e) => setUseCase(e.target.value)}
            aria-invalid={bad('useCase')}
            aria-describedby={`${ids.useCase}-hint`}
          />
          <datalist id={ids.useCases}>
            {useCases.map((u) => (
              <option key={u} value={u} />
            ))}
          </datalist>
          <p className="hint" id={`${ids.useCase}-hint`}>
            Pick one ({useCases.join(', ') || '…'}) or type your own.
          </p>
        </div>
        <fieldset className="field" aria-invalid={bad('chain')}>
          <legend>
            Chain <span className="req">(required)</span>
          </legend>
          <label htmlFor={ids.search} className="sub-label">
            Search chains
          </label>
          <input
            id={ids.search}
            type="search"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            placeholder="Chain or network name, e.g. eth"
            autoComplete="off"
          />
          <div className="chain-results" aria-live="polite">
            {chains === null ? (
              <p className="muted">Searching…</p>
            ) : chains.length === 0 ? (
              <p className="muted">No chain matches “{query}”.</p>
            ) : (
              chains.map((c) => (
                <label key={c.id} className={`choice${chain === c.id ? ' choice-selected' : ''}`}>
                  <input
                    type="radio"
                    name="chain"
                    value={c.id}
                    checked={chain === c.id}
                    onChange={() => setChain(c.id)}
                  />
                  <span>
                    <strong>{c.name}</strong> <span className="mono muted">{c.id}</span>
                    <span className="chain-nets">
                      {c.networks.map((n) => (
                        <span key={n.network} className="pill">
                          {n.label} · chain id {n.chainId}
                          {n.local ? ' · local' : ''}
                        </span>
                      ))}
                    </span>
                  </span>
                </label>
              ))
            )}
          </div>
        </fieldset>
        <fieldset className="field">
          <legend>
            Services <span className="req">(at least one)</span>
          </legend>
          {SERVICES.map((s) => (
            <label key={s.id} className="choice">
              <input
                type="checkbox"
                checked={services.includes(s.id)}
                onChange={(e) =>
                  setServices((cur) => (e.target.checked ? [...cur, s.id] : cur.filter((x) => x !== s.id)))
                }
              />
              <span>
                <strong>{s.label}</strong> <span className="muted">— {s.hint}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <ErrorText error={error} id={ids.error} />
        <div className="row">
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create app'}
          </button>
          <a className="btn" href={href('apps')}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}
