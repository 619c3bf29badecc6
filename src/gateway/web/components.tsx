// Small shared pieces: copyable fields, code blocks, inline errors, tabs (WAI-ARIA tabs with arrow keys), confirm.
import { useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import type { ShownError } from './api.js';

/** Copies text: the async clipboard API, else a hidden textarea + execCommand (non-secure origins, older browsers). */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = document.createElement('textarea');
    ta.value = text;
    ta.setAttribute('readonly', '');
    ta.style.position = 'fixed';
    ta.style.opacity = '0';
    document.body.appendChild(ta);
    ta.select();
    const ok = document.execCommand('copy');
    ta.remove();
    return ok;
  }
}

export function CopyButton({ text, label = 'Copy', what }: { text: string; label?: string; what?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  return (
    <button
      type="button"
      className="btn btn-small"
      aria-label={what ? `${label} ${what}` : label}
      onClick={async () => {
        setState((await copyText(text)) ? 'copied' : 'failed');
        window.clearTimeout(timer.current);
        timer.current = window.setTimeout(() => setState('idle'), 2500);
      }}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label}
      <span className="visually-hidden" role="status">
        {state === 'copied' ? `${what ?? 'Text'} copied to the clipboard` : ''}
      </span>
    </button>
  );
}

/** A read-only value (URL, key) with a Copy button. */
export function CopyField({ label, value, testId }: { label: string; value: string; testId?: string }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input
          id={id}
          className="mono"
          readOnly
          value={value}
          data-testid={testId}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={value} what={label} />
      </div>
    </div>
  );
}

export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <section className="code" aria-label={`${label} code`}>
      <div className="code-head">
        <span>{label}</span>
        <CopyButton text={code} what="code" />
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a code block that scrolls sideways must be reachable by keyboard to be scrolled (WCAG 2.1.1); the section names it */}
      <pre tabIndex={0}>
        <code data-testid="example-code">{code}</code>
      </pre>
    </section>
  );
}

/** A used-of-limit bar: the native <meter> (its role, value and range come with it), with the numbers as its text. */
export function UsageMeter({ label, used, limit, text }: { label: string; used: number; limit: number; text: string }) {
  return <meter className="meter" aria-label={label} min={0} max={limit} value={used} aria-valuetext={text} />;
}

export function ErrorText({ error, id }: { error: ShownError | null | undefined; id?: string }) {
  if (!error) return null;
  return (
    <p className="error" role="alert" id={id}>
      {error.message}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

export interface TabDef {
  id: string;
  label: string;
}

/** Tabs per WAI-ARIA: one tab stop, arrow keys / Home / End move between tabs and select them. */
export function Tabs({
  tabs,
  selected,
  onSelect,
  label,
  idPrefix,
}: {
  tabs: TabDef[];
  selected: string;
  onSelect: (id: string) => void;
  label: string;
  idPrefix: string;
}) {
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  const onKey = (e: KeyboardEvent, i: number) => {
    let next = -1;
    if (e.key === 'ArrowRight') next = (i + 1) % tabs.length;
    else if (e.key === 'ArrowLeft') next = (i - 1 + tabs.length) % tabs.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = tabs.length - 1;
    if (next < 0) return;
    e.preventDefault();
    onSelect(tabs[next].id);
    refs.current[next]?.focus();
  };
  return (
    <div role="tablist" aria-label={label} className="tabs">
      {tabs.map((t, i) => (
        <button
          key={t.id}
          ref={(el) => {
            refs.current[i] = el;
          }}
          type="button"
          role="tab"
          id={`${idPrefix}-tab-${t.id}`}
          aria-controls={`${idPrefix}-panel-${t.id}`}
          aria-selected={t.id === selected}
          tabIndex={t.id === selected ? 0 : -1}
          className="tab"
          onClick={() => onSelect(t.id)}
          onKeyDown={(e) => onKey(e, i)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function TabPanel({ idPrefix, id, children }: { idPrefix: string; id: string; children: ReactNode }) {
  return (
    <div role="tabpanel" id={`${idPrefix}-panel-${id}`} aria-labelledby={`${idPrefix}-tab-${id}`} className="tabpanel">
      {children}
    </div>
  );
}

/** A destructive action behind an inline confirmation (keyboard-friendly, no window.confirm). */
export function ConfirmAction({
  label,
  confirmLabel,
  question,
  onConfirm,
  danger = true,
}: {
  label: string;
  confirmLabel: string;
  question: ReactNode;
  onConfirm: () => Promise<void>;
  danger?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (open) confirmRef.current?.focus();
  }, [open]);
  if (!open)
    return (
      <button type="button" className={danger ? 'btn btn-danger-outline' : 'btn'} onClick={() => setOpen(true)}>
        {label}
      </button>
    );
  return (
    <fieldset className="confirm" aria-label={label}>
      <p>{question}</p>
      <div className="row">
        <button
          ref={confirmRef}
          type="button"
          className={danger ? 'btn btn-danger' : 'btn btn-primary'}
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            try {
              await onConfirm();
            } finally {
              setBusy(false);
              setOpen(false);
            }
          }}
        >
          {confirmLabel}
        </button>
        <button type="button" className="btn" onClick={() => setOpen(false)} disabled={busy}>
          Cancel
        </button>
      </div>
    </fieldset>
  );
}

export function formatDate(ts: string): string {
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? ts : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export const fmt = (n: number): string => n.toLocaleString('en-US');
