// The operators' page (#/admin; issue 27): only for admins (`account_me.admin`: the nav shows it to them alone, and
// every admin_ method refuses anyone else on the server). Accounts with search, usage today and this month; one
// account's detail: suspend (with a reason) / unsuspend, plan and per-account override, usage by day, its audit trail;
// sign-up invites (create, copy the link, revoke); the audit trail of every account.
import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import {
  api,
  describeError,
  type AdminAccount,
  type AdminActivityEntry,
  type AdminUsage,
  type CreatedInvite,
  type Invite,
  type PlanList,
  type ShownError,
} from '../api.js';
import { CopyField, ErrorText, fmt, formatDate, Notice } from '../components.js';
import { ACTION_LABELS, detailText } from './Settings.js';

type Fail = (e: unknown) => boolean;

const DAY = 86_400_000;
const day = (t: number) => new Date(t).toISOString().slice(0, 10);

export function AdminPage({ onUnauthorized, selfId }: { onUnauthorized: Fail; selfId: string }) {
  const [selected, setSelected] = useState<string | null>(null);
  // Bumped after a change, so the lists read again.
  const [version, setVersion] = useState(0);
  const changed = useCallback(() => setVersion((v) => v + 1), []);
  return (
    <section aria-labelledby="admin-title" className="stack">
      <h1 id="admin-title" tabIndex={-1}>
        Admin
      </h1>
      <p className="muted">
        Operate this deployment: accounts, suspensions, plans, usage, invites and the audit trail.
      </p>
      <Accounts fail={onUnauthorized} onSelect={setSelected} version={version} />
      {selected !== null && (
        <AccountDetail
          key={selected}
          userId={selected}
          self={selected === selfId}
          fail={onUnauthorized}
          onChanged={changed}
          onClose={() => setSelected(null)}
        />
      )}
      <Invites fail={onUnauthorized} />
      <Trail fail={onUnauthorized} version={version} />
    </section>
  );
}

function statusText(a: AdminAccount): string {
  return a.suspended === null ? 'Active' : `Suspended: ${a.suspended.reason}`;
}

function Accounts({ fail, onSelect, version }: { fail: Fail; onSelect: (id: string) => void; version: number }) {
  const searchId = useId();
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const [rows, setRows] = useState<AdminAccount[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the trigger (a change was made), not a value read
  useEffect(() => {
    setError(null);
    api.request('admin_listAccounts', [{ ...(query === '' ? {} : { search: query }), limit: 100 }]).then(
      (p) => setRows(p.accounts),
      (e) => fail(e) || setError(describeError(e)),
    );
  }, [query, fail, version]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setQuery(search.trim());
  };
  return (
    <section className="card stack" aria-labelledby="accounts-title">
      <h2 id="accounts-title">Accounts</h2>
      <form className="row" onSubmit={submit}>
        <label htmlFor={searchId} className="visually-hidden">
          Search accounts
        </label>
        <input
          id={searchId}
          type="search"
          placeholder="Email or user id"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
        <button type="submit" className="btn">
          Search
        </button>
      </form>
      <ErrorText error={error} />
      {rows === null ? (
        !error && <p className="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="muted">No accounts match.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" data-testid="admin-accounts">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Status</th>
                <th scope="col">Plan</th>
                <th scope="col" className="num">
                  Apps
                </th>
                <th scope="col" className="num">
                  Keys
                </th>
                <th scope="col" className="num">
                  Today
                </th>
                <th scope="col" className="num">
                  This month
                </th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => (
                <tr key={a.id} data-testid={`account-${a.email}`}>
                  <td>
                    {a.email}
                    {a.admin && <span className="pill">admin</span>}
                  </td>
                  <td>{statusText(a)}</td>
                  <td>
                    {a.plan ?? '(default)'}
                    {a.planOverride !== null && <span className="pill">override</span>}
                  </td>
                  <td className="num">{a.apps}</td>
                  <td className="num">{a.keys}</td>
                  <td className="num">{fmt(a.usage.today)}</td>
                  <td className="num">{fmt(a.usage.month)}</td>
                  <td>
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={`Manage ${a.email}`}
                      onClick={() => onSelect(a.id)}
                    >
                      Manage
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function AccountDetail({
  userId,
  self,
  fail,
  onChanged,
  onClose,
}: {
  userId: string;
  self: boolean;
  fail: Fail;
  onChanged: () => void;
  onClose: () => void;
}) {
  const reasonId = useId();
  const planId = useId();
  const overrideId = useId();
  const [a, setA] = useState<AdminAccount | null>(null);
  const [plans, setPlans] = useState<PlanList | null>(null);
  const [reason, setReason] = useState('');
  const [plan, setPlan] = useState('');
  const [override, setOverride] = useState('');
  const [usage, setUsage] = useState<AdminUsage | null>(null);
  const [trail, setTrail] = useState<AdminActivityEntry[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const show = useCallback((x: AdminAccount) => {
    setA(x);
    setPlan(x.plan ?? '');
    setOverride(x.planOverride === null ? '' : JSON.stringify(x.planOverride));
  }, []);
  const loadTrail = useCallback(
    () =>
      api.request('admin_activity', [{ userId, limit: 20 }]).then(
        (p) => setTrail(p.entries),
        (e) => fail(e) || setError(describeError(e)),
      ),
    [userId, fail],
  );
  useEffect(() => {
    const now = Date.now();
    api.request('admin_getAccount', [{ userId }]).then(show, (e) => fail(e) || setError(describeError(e)));
    api.request('admin_plans').then(setPlans, (e) => fail(e) || setError(describeError(e)));
    api
      .request('admin_usage', [{ since: day(now - 29 * DAY), until: day(now), userId }])
      .then(setUsage, (e) => fail(e) || setError(describeError(e)));
    void loadTrail();
  }, [userId, fail, show, loadTrail]);

  /** Runs a change, shows the account as it is after it, and says what happened. */
  const act = async (what: string, f: () => Promise<AdminAccount>) => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      show(await f());
      setDone(what);
      onChanged();
      void loadTrail();
    } catch (e) {
      if (!fail(e)) setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  const suspend = (e: FormEvent) => {
    e.preventDefault();
    void act('Account suspended.', () => api.request('admin_suspend', [{ userId, reason: reason.trim() }]));
  };
  const savePlan = (e: FormEvent) => {
    e.preventDefault();
    let parsed: Record<string, number | null> | null = null;
    if (override.trim() !== '') {
      try {
        parsed = JSON.parse(override) as Record<string, number | null>;
      } catch {
        setError({ message: 'Override: not valid JSON (e.g. {"daily": 5000, "maxKeys": 10}).', field: '/0/override' });
        return;
      }
    }
    void act('Plan saved.', () =>
      api.request('admin_setPlan', [{ userId, plan: plan === '' ? null : plan, override: parsed }]),
    );
  };

  // The days with requests, newest first (admin_usage answers every day of the range).
  const usedDays = (usage?.days ?? []).filter((d) => d.requests > 0).reverse();
  if (a === null)
    return (
      <section className="card">
        <ErrorText error={error} />
        {!error && <p className="muted">Loading…</p>}
      </section>
    );
  return (
    <section className="card stack" aria-labelledby="account-title" data-testid="admin-account">
      <div className="row">
        <h2 id="account-title">{a.email}</h2>
        <button type="button" className="btn btn-small" onClick={onClose}>
          Close
        </button>
      </div>
      <p>
        <span data-testid="admin-account-status">{statusText(a)}</span> · member since {formatDate(a.createdAt)} ·{' '}
        {a.apps} apps, {a.keys} keys · <span className="mono">{a.id}</span>
      </p>
      {done && <Notice>{done}</Notice>}
      <ErrorText error={error} />

      <h3>Suspension</h3>
      {a.suspended === null ? (
        <form className="stack" onSubmit={suspend}>
          <div className="field">
            <label htmlFor={reasonId}>Reason for suspending</label>
            <input id={reasonId} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} />
          </div>
          <div>
            <button type="submit" className="btn btn-danger" disabled={busy || self || reason.trim() === ''}>
              Suspend account
            </button>
            {self && <span className="muted"> You cannot suspend your own account.</span>}
          </div>
        </form>
      ) : (
        <div>
          <button
            type="button"
            className="btn btn-primary"
            disabled={busy}
            onClick={() => void act('Suspension lifted.', () => api.request('admin_unsuspend', [{ userId }]))}
          >
            Unsuspend account
          </button>
        </div>
      )}

      <h3>Plan</h3>
      <form className="stack" onSubmit={savePlan}>
        <div className="field">
          <label htmlFor={planId}>Plan</label>
          <select id={planId} value={plan} onChange={(e) => setPlan(e.target.value)}>
            <option value="">(default{plans?.defaultPlan ? `: ${plans.defaultPlan}` : ''})</option>
            {(plans?.plans ?? []).map((p) => (
              <option key={p.name} value={p.name}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={overrideId}>Per-account override (JSON, empty for none)</label>
          <input
            id={overrideId}
            className="mono"
            value={override}
            placeholder='{"daily": 5000, "maxKeys": 10}'
            onChange={(e) => setOverride(e.target.value)}
          />
        </div>
        <div>
          <button type="submit" className="btn" disabled={busy}>
            Save plan
          </button>
        </div>
      </form>
      <p className="muted" data-testid="admin-account-limits">
        In effect: {a.limits.perSecond ?? '∞'}/s, {a.limits.daily === null ? '∞' : fmt(a.limits.daily)} a day,{' '}
        {a.limits.monthly === null ? '∞' : fmt(a.limits.monthly)} a month; keys {fmt(a.limits.keysDaily)} a day; at most{' '}
        {a.limits.maxApps} apps and {a.limits.maxKeys} keys.
      </p>

      <h3>Usage by day (last 30 days)</h3>
      {usage === null ? (
        <p className="muted">Loading…</p>
      ) : usedDays.length === 0 ? (
        <p className="muted">No requests in the last 30 days.</p>
      ) : (
        <table className="table compact" data-testid="admin-usage">
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col" className="num">
                Requests
              </th>
              <th scope="col" className="num">
                Successful
              </th>
              <th scope="col" className="num">
                Units
              </th>
            </tr>
          </thead>
          <tbody>
            {usedDays.map((d) => (
              <tr key={d.day}>
                <td>{d.day}</td>
                <td className="num">{fmt(d.requests)}</td>
                <td className="num">{fmt(d.success)}</td>
                <td className="num">{fmt(d.units)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h3>Audit trail of this account</h3>
      <TrailTable entries={trail} testId="admin-account-trail" />
    </section>
  );
}

function TrailTable({ entries, testId }: { entries: AdminActivityEntry[] | null; testId: string }) {
  if (entries === null) return <p className="muted">Loading…</p>;
  if (entries.length === 0) return <p className="muted">Nothing yet.</p>;
  return (
    <div className="table-wrap">
      <table className="table compact" data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Account</th>
            <th scope="col">What</th>
            <th scope="col">By</th>
            <th scope="col">Detail</th>
            <th scope="col">From</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: entries have no id; the page is replaced as a whole
            <tr key={i}>
              <td>{formatDate(e.time)}</td>
              <td>{e.email ?? e.userId}</td>
              <td>{ACTION_LABELS[e.action]}</td>
              <td>{e.actor === undefined ? '' : (e.actor.email ?? e.actor.id)}</td>
              <td>{detailText(e.detail)}</td>
              <td className="mono">{e.ip ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Trail({ fail, version }: { fail: Fail; version: number }) {
  const [entries, setEntries] = useState<AdminActivityEntry[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the trigger (a change was made), not a value read
  useEffect(() => {
    api.request('admin_activity', [{ limit: 30 }]).then(
      (p) => setEntries(p.entries),
      (e) => fail(e) || setError(describeError(e)),
    );
  }, [fail, version]);
  return (
    <section className="card stack" aria-labelledby="trail-title">
      <h2 id="trail-title">Audit trail</h2>
      <ErrorText error={error} />
      {!error && <TrailTable entries={entries} testId="admin-trail" />}
    </section>
  );
}

function Invites({ fail }: { fail: Fail }) {
  const emailId = useId();
  const ttlId = useId();
  const [email, setEmail] = useState('');
  const [ttl, setTtl] = useState('');
  const [made, setMade] = useState<CreatedInvite | null>(null);
  const [list, setList] = useState<Invite[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const load = useCallback(
    () =>
      api.request('admin_listInvites').then(
        (r) => setList(r.invites),
        (e) => fail(e) || setError(describeError(e)),
      ),
    [fail],
  );
  useEffect(() => {
    void load();
  }, [load]);
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const hours = ttl.trim() === '' ? undefined : Number(ttl);
      setMade(
        await api.request('admin_createInvite', [
          {
            ...(email.trim() === '' ? {} : { email: email.trim() }),
            ...(hours === undefined ? {} : { ttlHours: hours }),
          },
        ]),
      );
      setEmail('');
      void load();
    } catch (err) {
      if (!fail(err)) setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (id: string) => {
    setError(null);
    try {
      await api.request('admin_revokeInvite', [{ id }]);
      if (made?.id === id) setMade(null);
      void load();
    } catch (err) {
      if (!fail(err)) setError(describeError(err));
    }
  };
  return (
    <section className="card stack" aria-labelledby="invites-title">
      <h2 id="invites-title">Invites</h2>
      <p className="muted">
        Single-use sign-up links (needed when this deployment's sign-up is by invite). Bound to an email, the link is
        mailed there when mail is configured.
      </p>
      <form className="stack" onSubmit={create}>
        <div className="row">
          <div className="field">
            <label htmlFor={emailId}>Invitee's email (optional)</label>
            <input id={emailId} type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={ttlId}>Valid for (hours, optional)</label>
            <input id={ttlId} type="number" min={1} value={ttl} onChange={(e) => setTtl(e.target.value)} />
          </div>
        </div>
        <div>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            Create invite
          </button>
        </div>
      </form>
      <ErrorText error={error} />
      {made && (
        <div data-testid="invite-created">
          <CopyField label="Invite link (shown once)" value={made.url} testId="invite-url" />
          <p className="muted">
            {made.email ? `For ${made.email}. ` : 'For anyone holding the link. '}
            {made.mailed ? 'Mailed.' : 'Not mailed: pass it on yourself.'} Works once, until{' '}
            {formatDate(made.expiresAt)}.
          </p>
        </div>
      )}
      {list !== null && list.length > 0 && (
        <div className="table-wrap">
          <table className="table compact" data-testid="admin-invites">
            <thead>
              <tr>
                <th scope="col">For</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">By</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((i) => (
                <tr key={i.id} data-testid={`invite-${i.id}`}>
                  <td>{i.email ?? '(anyone)'}</td>
                  <td>{i.status}</td>
                  <td>{formatDate(i.expiresAt)}</td>
                  <td>{i.createdBy ?? ''}</td>
                  <td>
                    {i.status === 'pending' && (
                      <button
                        type="button"
                        className="btn btn-small btn-danger-outline"
                        aria-label={`Revoke invite ${i.id}`}
                        onClick={() => void revoke(i.id)}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
