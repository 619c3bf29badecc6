// One app: Set up (examples), Metrics, Networks (RPC URLs), Settings (name, allowlists, JWT keys, rotate, delete).
import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import {
  api,
  describeError,
  type AllowlistEntry,
  type AllowlistKind,
  type App,
  type Chain,
  type JwtAlg,
  type JwtKey,
  type ShownError,
} from '../api.js';
import {
  CodeBlock,
  ConfirmAction,
  CopyField,
  ErrorText,
  Notice,
  TabPanel,
  Tabs,
  formatDate,
  type TabDef,
} from '../components.js';
import {
  DEFAULT_LANGUAGE,
  LANGUAGES,
  LATEST_BLOCK,
  METHODS,
  WS_SDKS,
  exampleCode,
  toWsUrl,
  wsExampleCode,
  type ExampleId,
  type Language,
  type Transport,
  type WsExampleId,
} from '../examples.js';
import { href, navigate } from '../router.js';
import type { PageProps } from './Apps.js';
import { MetricsPanel } from './Metrics.js';
import { LogsPanel } from './Logs.js';

const TABS: TabDef[] = [
  { id: 'setup', label: 'Set up' },
  { id: 'metrics', label: 'Metrics' },
  { id: 'networks', label: 'Networks' },
  { id: 'settings', label: 'Settings' },
  // After the service spec's four tabs, so their order (and arrow-key travel between them) stays as users know it.
  { id: 'logs', label: 'Logs' },
];

export function AppDetailPage({ appId, tab, onUnauthorized }: PageProps & { appId: string; tab: string }) {
  const [app, setApp] = useState<App | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [chain, setChain] = useState<Chain | undefined>();
  const fail = useCallback((e: unknown) => onUnauthorized(e) || setError(describeError(e)), [onUnauthorized]);

  useEffect(() => {
    api.request('apps_get', [appId]).then((a) => {
      setApp(a);
      api.request('chains_list', [a.chain]).then(
        (cs) => setChain(cs.find((c) => c.id === a.chain)),
        () => undefined,
      );
    }, fail);
  }, [appId, fail]);

  if (error && !app)
    return (
      <section>
        <h1 tabIndex={-1}>App not available</h1>
        <ErrorText error={error} />
        <a href={href('apps')}>Back to your apps</a>
      </section>
    );
  if (!app) return <p className="muted">Loading app…</p>;
  const selected = TABS.some((t) => t.id === tab) ? tab : 'setup';
  const prefix = 'app';

  return (
    <section aria-labelledby="app-title">
      <p className="crumbs">
        <a href={href('apps')}>Apps</a> <span aria-hidden="true">/</span> {app.name}
      </p>
      <div className="page-head">
        <div>
          <h1 id="app-title" tabIndex={-1}>
            {app.name}
          </h1>
          <p className="muted">
            {app.useCase} · {chain?.name ?? app.chain} · {app.networks.join(', ')}
            {app.requireJwt ? ' · JWT required' : ''}
          </p>
        </div>
      </div>
      <Tabs
        tabs={TABS}
        selected={selected}
        onSelect={(t) => navigate('apps', app.id, t)}
        label="App sections"
        idPrefix={prefix}
      />
      <TabPanel idPrefix={prefix} id={selected}>
        {selected === 'setup' && <SetUpTab app={app} />}
        {selected === 'metrics' && <MetricsTab app={app} fail={onUnauthorized} />}
        {selected === 'logs' && (
          <div className="stack">
            <h2>Logs</h2>
            <p className="muted">Every call through this app's URLs, newest first. Select a time for its details.</p>
            <LogsPanel target={{ kind: 'app', id: app.id }} fail={onUnauthorized} />
          </div>
        )}
        {selected === 'networks' && <NetworksTab app={app} chain={chain} />}
        {selected === 'settings' && <SettingsTab app={app} onChange={setApp} fail={fail} />}
      </TabPanel>
    </section>
  );
}

const TRANSPORTS: { id: Transport; label: string }[] = [
  { id: 'http', label: 'HTTP' },
  { id: 'websocket', label: 'WebSocket' },
];

/** Examples by method, language and SDK with the app's URL filled in; opens on the latest block in JavaScript/ethers.
 *  "WebSocket" shows the same method on the ws(s):// URL (wscat, ethers WebSocketProvider, viem webSocket). */
export function Examples({
  urls,
  defaultNetwork,
  showUrl = false,
}: {
  urls: Record<string, string | undefined>;
  defaultNetwork?: string;
  showUrl?: boolean;
}) {
  const networks = Object.keys(urls).filter((n) => urls[n]);
  const [network, setNetwork] = useState(defaultNetwork && urls[defaultNetwork] ? defaultNetwork : networks[0]);
  const [method, setMethod] = useState(LATEST_BLOCK);
  const [language, setLanguage] = useState<Language['id']>(DEFAULT_LANGUAGE);
  const lang = LANGUAGES.find((l) => l.id === language)!;
  const [sdk, setSdk] = useState<ExampleId>(lang.sdks[0].id);
  const [transport, setTransport] = useState<Transport>('http');
  const [wsSdk, setWsSdk] = useState<WsExampleId>(WS_SDKS[0].id);
  const ids = { method: useId(), network: useId() };
  const url = urls[network] ?? '';
  const wsUrl = toWsUrl(url);
  const ws = transport === 'websocket';
  const code = ws ? wsExampleCode(method, wsSdk, wsUrl) : exampleCode(method, sdk, url);
  const sdkLabel = ws
    ? (WS_SDKS.find((s) => s.id === wsSdk)?.label ?? wsSdk)
    : (lang.sdks.find((s) => s.id === sdk)?.label ?? sdk);

  return (
    <div className="examples">
      <div className="example-controls">
        <div className="field">
          <label htmlFor={ids.method}>Method</label>
          <select id={ids.method} value={method} onChange={(e) => setMethod(e.target.value)}>
            {METHODS.map((m) => (
              <option key={m.id} value={m.id}>
                {m.label}
              </option>
            ))}
          </select>
        </div>
        {networks.length > 1 && (
          <div className="field">
            <label htmlFor={ids.network}>Network</label>
            <select id={ids.network} value={network} onChange={(e) => setNetwork(e.target.value)}>
              {networks.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </div>
        )}
      </div>
      {showUrl && <CopyField label={`RPC URL (${network})`} value={url} testId={`setup-url-${network}`} />}
      <fieldset className="segmented-group">
        <legend>Transport</legend>
        <div className="segmented">
          {TRANSPORTS.map((t) => (
            <button key={t.id} type="button" aria-pressed={t.id === transport} onClick={() => setTransport(t.id)}>
              {t.label}
            </button>
          ))}
        </div>
      </fieldset>
      {ws && (
        <>
          <CopyField label={`WebSocket URL (${network})`} value={wsUrl} testId={`setup-ws-url-${network}`} />
          <p className="muted">
            Every method works over the socket, plus eth_subscribe (newHeads, logs, newPendingTransactions); each
            delivered notification counts as one request.
          </p>
          <fieldset className="segmented-group">
            <legend>Client</legend>
            <div className="segmented">
              {WS_SDKS.map((s) => (
                <button key={s.id} type="button" aria-pressed={s.id === wsSdk} onClick={() => setWsSdk(s.id)}>
                  {s.label}
                </button>
              ))}
            </div>
          </fieldset>
        </>
      )}
      {!ws && (
        <fieldset className="segmented-group">
          <legend>Language</legend>
          <div className="segmented">
            {LANGUAGES.map((l) => (
              <button
                key={l.id}
                type="button"
                aria-pressed={l.id === language}
                onClick={() => {
                  setLanguage(l.id);
                  setSdk(l.sdks[0].id);
                }}
              >
                {l.label}
              </button>
            ))}
          </div>
        </fieldset>
      )}
      {!ws && lang.sdks.length > 1 && (
        <fieldset className="segmented-group">
          <legend>Library</legend>
          <div className="segmented">
            {lang.sdks.map((s) => (
              <button key={s.id} type="button" aria-pressed={s.id === sdk} onClick={() => setSdk(s.id)}>
                {s.label}
              </button>
            ))}
          </div>
        </fieldset>
      )}
      {code ? (
        <CodeBlock code={code} label={`${ws ? 'WebSocket' : lang.label} · ${sdkLabel}`} />
      ) : (
        <p className="muted">No example for this method in {sdkLabel}.</p>
      )}
    </div>
  );
}

function SetUpTab({ app }: { app: App }) {
  const first = app.networks.find((n) => app.urls[n]);
  return (
    <div className="stack">
      <h2>Set up</h2>
      <p className="muted">
        Your API key goes in the URL path; no header is needed
        {app.requireJwt ? ' (besides the JWT this app requires)' : ''}.
      </p>
      <CopyField label="API key" value={app.key} testId="app-key" />
      <Examples urls={app.urls} defaultNetwork={first} showUrl />
    </div>
  );
}

function MetricsTab({ app, fail }: { app: App; fail: (e: unknown) => unknown }) {
  return (
    <div className="stack">
      <h2>Metrics</h2>
      <p className="muted">
        Calls through this app's URLs: totals, success rate, calls per method and latency, in UTC periods.
      </p>
      <MetricsPanel target={{ kind: 'app', id: app.id }} networks={app.networks} fail={fail} />
    </div>
  );
}

function NetworksTab({ app, chain }: { app: App; chain?: Chain }) {
  const entries = Object.entries(app.urls).filter((e): e is [string, string] => typeof e[1] === 'string');
  return (
    <div className="stack">
      <h2>Networks</h2>
      {entries.length === 0 && <p className="muted">This app's chain has no network on this deployment.</p>}
      {entries.map(([network, url]) => {
        const info = chain?.networks.find((n) => n.network === network);
        return (
          <div key={network} className="card network-card">
            <h3>
              {info?.label ?? network}
              {info && <span className="pill">chain id {info.chainId}</span>}
              {info?.local && <span className="pill pill-local">local chain</span>}
            </h3>
            <CopyField label={`${info?.label ?? network} RPC URL`} value={url} testId={`rpc-url-${network}`} />
          </div>
        );
      })}
    </div>
  );
}

const KINDS: { kind: AllowlistKind; label: string; noun: string; placeholder: string; hint: string }[] = [
  {
    kind: 'origin',
    label: 'Origins',
    noun: 'origin',
    placeholder: 'https://app.example.com',
    hint: 'Browser origins; https://*.example.com for subdomains.',
  },
  {
    kind: 'ip',
    label: 'IP addresses',
    noun: 'IP address or CIDR',
    placeholder: '203.0.113.7 or 10.0.0.0/8',
    hint: 'IPv4/IPv6 addresses or CIDRs.',
  },
  {
    kind: 'address',
    label: 'Contract addresses',
    noun: 'contract address (0x and 40 hex digits)',
    placeholder: '0x…',
    hint: 'Applied to eth_call, eth_getLogs, eth_getCode, eth_getStorageAt.',
  },
  { kind: 'method', label: 'Methods', noun: 'node API method', placeholder: 'eth_call', hint: 'Node API methods.' },
];

function SettingsTab({ app, onChange, fail }: { app: App; onChange: (a: App) => void; fail: (e: unknown) => unknown }) {
  return (
    <div className="stack">
      <h2>Settings</h2>
      <DetailsForm app={app} onChange={onChange} />
      <Allowlists app={app} fail={fail} />
      <JwtKeys app={app} onChange={onChange} fail={fail} />
      <section className="card" aria-labelledby="rotate-title">
        <h3 id="rotate-title">API key</h3>
        <p className="muted">
          Rotating issues a new key; the current one stops working within seconds.{' '}
          {app.keyRotatedAt ? `Last rotated ${formatDate(app.keyRotatedAt)}.` : 'Never rotated.'}
        </p>
        <RotateKey app={app} onChange={onChange} />
      </section>
      <section className="card danger-zone" aria-labelledby="delete-title">
        <h3 id="delete-title">Delete app</h3>
        <p className="muted">Deleting the app revokes its key at once. This cannot be undone.</p>
        <DeleteApp app={app} />
      </section>
    </div>
  );
}

function DetailsForm({ app, onChange }: { app: App; onChange: (a: App) => void }) {
  const [name, setName] = useState(app.name);
  const [description, setDescription] = useState(app.description);
  const [error, setError] = useState<ShownError | null>(null);
  const [saved, setSaved] = useState(false);
  const ids = { name: useId(), description: useId() };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    try {
      onChange(await api.request('apps_update', [app.id, { name, description }]));
      setSaved(true);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <section className="card" aria-labelledby="details-title">
      <h3 id="details-title">Details</h3>
      <form onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={ids.name}>Name</label>
          <input id={ids.name} value={name} maxLength={64} onChange={(e) => setName(e.target.value)} />
        </div>
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
        <ErrorText error={error} />
        <div className="row">
          <button type="submit" className="btn btn-primary">
            Save changes
          </button>
          {saved && <Notice>Saved.</Notice>}
        </div>
      </form>
    </section>
  );
}

function Allowlists({ app, fail }: { app: App; fail: (e: unknown) => unknown }) {
  const [entries, setEntries] = useState<AllowlistEntry[] | null>(null);
  useEffect(() => {
    api.request('apps_listAllowlist', [app.id]).then(setEntries, fail);
  }, [app.id, fail]);
  return (
    <section className="card" aria-labelledby="allow-title">
      <h3 id="allow-title">Allowlists</h3>
      <p className="muted">
        An empty list allows everything. Once a list has an entry, requests must match one of its entries; lists combine
        with AND.
      </p>
      <div className="allow-grid">
        {KINDS.map((k) => (
          <AllowlistKindEditor
            key={k.kind}
            app={app}
            def={k}
            entries={(entries ?? []).filter((e) => e.kind === k.kind)}
            onAdded={(e) => setEntries((cur) => [...(cur ?? []).filter((x) => x.id !== e.id), e])}
            onRemoved={(id) => setEntries((cur) => (cur ?? []).filter((x) => x.id !== id))}
          />
        ))}
      </div>
    </section>
  );
}

function AllowlistKindEditor({
  app,
  def,
  entries,
  onAdded,
  onRemoved,
}: {
  app: App;
  def: (typeof KINDS)[number];
  entries: AllowlistEntry[];
  onAdded: (e: AllowlistEntry) => void;
  onRemoved: (id: string) => void;
}) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const id = useId();
  const add = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      onAdded(await api.request('apps_addAllowlistEntry', [app.id, { kind: def.kind, value: value.trim() } as never]));
      setValue('');
    } catch (err) {
      const shown = describeError(err);
      // The server's reason is a schema pattern; say it in words.
      setError(shown.code === -32602 ? { ...shown, message: `“${value.trim()}” is not a valid ${def.noun}.` } : shown);
    }
  };
  const remove = async (entry: AllowlistEntry) => {
    setError(null);
    try {
      await api.request('apps_removeAllowlistEntry', [app.id, entry.id]);
      onRemoved(entry.id);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <div className="allow-kind" data-kind={def.kind}>
      <h4>{def.label}</h4>
      {entries.length === 0 ? (
        <p className="muted small">Any {def.kind === 'ip' ? 'IP' : def.kind} allowed.</p>
      ) : (
        <ul className="entry-list">
          {entries.map((e) => (
            <li key={e.id}>
              <span className="mono">{e.value}</span>
              <button
                type="button"
                className="btn btn-small"
                aria-label={`Remove ${def.kind} ${e.value}`}
                onClick={() => remove(e)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add} className="inline-form" noValidate>
        <label htmlFor={id} className="visually-hidden">
          Add {def.kind === 'ip' ? 'IP address' : def.kind === 'address' ? 'contract address' : def.kind}
        </label>
        <input
          id={id}
          value={value}
          placeholder={def.placeholder}
          onChange={(e) => setValue(e.target.value)}
          aria-describedby={`${id}-hint`}
        />
        <button type="submit" className="btn btn-small" disabled={!value.trim()}>
          Add
        </button>
      </form>
      <p className="hint" id={`${id}-hint`}>
        {def.hint}
      </p>
      <ErrorText error={error} />
    </div>
  );
}

const ALGS: JwtAlg[] = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384'];

function JwtKeys({ app, onChange, fail }: { app: App; onChange: (a: App) => void; fail: (e: unknown) => unknown }) {
  const [keys, setKeys] = useState<JwtKey[] | null>(null);
  const [alg, setAlg] = useState<JwtAlg>('RS256');
  const [pem, setPem] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const [added, setAdded] = useState<JwtKey | null>(null);
  const ids = { alg: useId(), pem: useId(), require: useId() };
  useEffect(() => {
    api.request('apps_listJwtKeys', [app.id]).then(setKeys, fail);
  }, [app.id, fail]);

  const add = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setAdded(null);
    try {
      const k = await api.request('apps_addJwtKey', [app.id, { alg, publicKeyPem: pem.trim() }]);
      setKeys((cur) => [...(cur ?? []), k]);
      setAdded(k);
      setPem('');
    } catch (err) {
      setError(describeError(err));
    }
  };
  const remove = async (k: JwtKey) => {
    setError(null);
    try {
      await api.request('apps_removeJwtKey', [app.id, k.id]);
      setKeys((cur) => (cur ?? []).filter((x) => x.id !== k.id));
      setAdded((a) => (a?.id === k.id ? null : a));
    } catch (err) {
      setError(describeError(err));
    }
  };
  // Shown at once while the change is sent; the app's answer (or the error) settles it.
  const [pending, setPending] = useState<boolean | null>(null);
  const toggle = async (on: boolean) => {
    setError(null);
    setPending(on);
    try {
      onChange(await api.request('apps_setRequireJwt', [app.id, on]));
    } catch (err) {
      setError(describeError(err));
    } finally {
      setPending(null);
    }
  };

  return (
    <section className="card" aria-labelledby="jwt-title">
      <h3 id="jwt-title">JWT keys</h3>
      <p className="muted">
        With “Require JWT” on, every request must carry{' '}
        <span className="mono">Authorization: Bearer &lt;token&gt;</span> signed by one of these keys, with the key id
        as <span className="mono">kid</span>.
      </p>
      <label className="switch" htmlFor={ids.require}>
        <input
          id={ids.require}
          type="checkbox"
          role="switch"
          checked={pending ?? app.requireJwt}
          aria-checked={pending ?? app.requireJwt}
          disabled={pending !== null}
          onChange={(e) => toggle(e.target.checked)}
        />
        <span>Require JWT</span>
      </label>
      {keys && keys.length > 0 && (
        <ul className="entry-list jwt-list">
          {keys.map((k) => (
            <li key={k.id}>
              <span>
                <span className="mono">{k.id}</span> <span className="pill">{k.alg}</span>{' '}
                <span className="muted small">added {formatDate(k.createdAt)}</span>
              </span>
              <button
                type="button"
                className="btn btn-small"
                aria-label={`Remove JWT key ${k.id}`}
                onClick={() => remove(k)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {keys?.length === 0 && <p className="muted small">No JWT keys.</p>}
      <form onSubmit={add} noValidate>
        <div className="field">
          <label htmlFor={ids.alg}>Algorithm</label>
          <select id={ids.alg} value={alg} onChange={(e) => setAlg(e.target.value as JwtAlg)}>
            {ALGS.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.pem}>Public key (PEM)</label>
          <textarea
            id={ids.pem}
            className="mono"
            rows={4}
            value={pem}
            onChange={(e) => setPem(e.target.value)}
            placeholder={'-----BEGIN PUBLIC KEY-----\n…\n-----END PUBLIC KEY-----'}
          />
        </div>
        <button type="submit" className="btn" disabled={!pem.trim()}>
          Add JWT key
        </button>
      </form>
      {added && (
        <Notice>
          Added. Its key id (use it as the token's kid): <span className="mono">{added.id}</span>
        </Notice>
      )}
      <ErrorText error={error} />
      <JwtLifetime app={app} onChange={onChange} />
    </section>
  );
}

/** The longest JWT lifetime (exp − iat) the app accepts, in hours; empty = no maximum. */
function JwtLifetime({ app, onChange }: { app: App; onChange: (a: App) => void }) {
  const shown = (sec: number | null) => (sec === null ? '' : String(Math.round((sec / 3600) * 1000) / 1000));
  const [hours, setHours] = useState(shown(app.jwtMaxLifetimeSec));
  const [error, setError] = useState<ShownError | null>(null);
  const [saved, setSaved] = useState(false);
  const id = useId();
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    const h = hours.trim();
    const sec = h === '' ? null : Math.round(Number(h) * 3600);
    if (sec !== null && !Number.isFinite(sec))
      return setError({ message: 'Enter a number of hours, or leave it empty for no maximum.' });
    try {
      const a = await api.request('apps_update', [app.id, { jwtMaxLifetimeSec: sec }]);
      onChange(a);
      setHours(shown(a.jwtMaxLifetimeSec));
      setSaved(true);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <form onSubmit={save} noValidate className="jwt-lifetime">
      <div className="field">
        <label htmlFor={id}>Longest token lifetime (hours)</label>
        <input
          id={id}
          inputMode="decimal"
          value={hours}
          onChange={(e) => setHours(e.target.value)}
          aria-describedby={`${id}-hint`}
        />
        <p className="hint" id={`${id}-hint`}>
          Tokens whose <span className="mono">exp − iat</span> is longer are refused, and tokens must then carry{' '}
          <span className="mono">iat</span>. 1 minute to 1 year; empty = no maximum. Default 24.
        </p>
      </div>
      <button type="submit" className="btn btn-small">
        Save lifetime
      </button>
      {saved && <Notice>Saved.</Notice>}
      <ErrorText error={error} />
    </form>
  );
}

function RotateKey({ app, onChange }: { app: App; onChange: (a: App) => void }) {
  const [error, setError] = useState<ShownError | null>(null);
  const [done, setDone] = useState(false);
  return (
    <>
      <ConfirmAction
        label="Rotate key"
        confirmLabel="Rotate now"
        danger={false}
        question={<>Rotate the key of “{app.name}”? Every client using the current URL must switch to the new one.</>}
        onConfirm={async () => {
          setError(null);
          try {
            onChange(await api.request('apps_rotateKey', [app.id]));
            setDone(true);
          } catch (err) {
            setError(describeError(err));
          }
        }}
      />
      {done && <Notice>Key rotated. The new URLs are in Set up and Networks.</Notice>}
      <ErrorText error={error} />
    </>
  );
}

function DeleteApp({ app }: { app: App }) {
  const [error, setError] = useState<ShownError | null>(null);
  return (
    <>
      <ConfirmAction
        label="Delete app"
        confirmLabel="Delete app permanently"
        question={<>Delete “{app.name}” and revoke its key? This cannot be undone.</>}
        onConfirm={async () => {
          setError(null);
          try {
            await api.request('apps_delete', [app.id]);
            navigate('apps');
          } catch (err) {
            setError(describeError(err));
          }
        }}
      />
      <ErrorText error={error} />
    </>
  );
}
