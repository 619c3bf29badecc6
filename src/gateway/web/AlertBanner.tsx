// The quota-alert banner: the signed-in account's alerts of the current periods (alerts_list), the highest threshold
// per quota only, refreshed on navigation and every minute. Nothing is shown when no quota is at 75 % or more.
import { useEffect, useState } from 'react';
import { api, type QuotaAlert } from './api.js';

const REFRESH_MS = 60_000;

function highestPerQuota(alerts: readonly QuotaAlert[]): QuotaAlert[] {
  const seen = new Map<string, QuotaAlert>();
  for (const a of alerts) {
    const k = `${a.subject}/${a.window}`;
    const have = seen.get(k);
    if (have === undefined || a.threshold > have.threshold) seen.set(k, a);
  }
  return [...seen.values()];
}

function describe(a: QuotaAlert): string {
  const who = a.subject === 'keys' ? 'API keys' : 'Apps';
  const window = a.window === 'day' ? 'daily' : 'monthly';
  const reset = `${a.resetAt.slice(0, 16).replace('T', ' ')} UTC`;
  const state = a.threshold >= 100 ? 'limit reached' : `${a.threshold} % used`;
  return `${who}: ${window} quota ${state} (${a.used.toLocaleString('en')} of ${a.limit.toLocaleString('en')}); resets ${reset}.`;
}

export function AlertBanner({ refreshKey }: { refreshKey: string }) {
  const [alerts, setAlerts] = useState<QuotaAlert[]>([]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshKey (the page) is the trigger to read again
  useEffect(() => {
    let live = true;
    const load = () =>
      api.request('alerts_list').then(
        (a) => live && setAlerts(highestPerQuota(a)),
        () => undefined, // the page shows session and store errors itself
      );
    void load();
    const timer = setInterval(load, REFRESH_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [refreshKey]);
  if (alerts.length === 0) return null;
  const full = alerts.some((a) => a.threshold >= 100);
  return (
    <div className={full ? 'alert-banner alert-banner-full' : 'alert-banner'} role="status" data-testid="alert-banner">
      <ul>
        {alerts.map((a) => (
          <li key={`${a.subject}/${a.window}`}>{describe(a)}</li>
        ))}
      </ul>
    </div>
  );
}
