// Human-readable report: one table for the methods, one for the protocol checks, then the summary line.
import type { CheckResult, ConformanceReport } from './run.js';

function table(rows: CheckResult[], title: string): string {
  const head = [title, 'status', 'ms', 'detail'];
  // One row per example pairing when a profile plans several calls: the example's name goes beside the method's.
  const cells = rows.map((r) => [
    r.example === undefined ? r.name : `${r.name} [${r.example}]`,
    r.status,
    r.ms.toFixed(1),
    r.detail,
  ]);
  const width = [0, 1, 2].map((i) => Math.max(head[i].length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) =>
    `${c[0].padEnd(width[0])}  ${c[1].padEnd(width[1])}  ${c[2].padStart(width[2])}  ${c[3]}`.trimEnd();
  return [line(head), line(width.map((w) => '-'.repeat(w)).concat('-'.repeat(6))), ...cells.map(line)].join('\n');
}

export function summaryLine(report: ConformanceReport): string {
  const s = report.summary;
  return `${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped${s.warnings ? `, ${s.warnings} warning${s.warnings === 1 ? '' : 's'} (defects of the document)` : ''}`;
}

export function formatReport(report: ConformanceReport): string {
  const out = [`conformance of ${report.url}`];
  if (report.factsSummary) out.push(...report.factsSummary);
  if (report.discoveryError) out.push(`discovery failed: ${report.discoveryError}`);
  out.push('');
  if (report.methods.length) out.push(table(report.methods, 'method'), '');
  if (report.protocol.length) out.push(table(report.protocol, 'protocol check'), '');
  out.push(summaryLine(report));
  return out.join('\n');
}
