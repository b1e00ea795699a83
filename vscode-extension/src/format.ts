/** Small pure formatting helpers shared by the UI modules (no `vscode` import). */

import type { Progress, TestResults, Verdict } from './protocol';

/** "3/5" or undefined when there is nothing to show. */
export function fraction(p: Progress | TestResults | null | undefined): string | undefined {
  if (!p || typeof p.total !== 'number' || p.total <= 0) return undefined;
  const done = 'done' in p ? p.done : p.passed;
  return `${done}/${p.total}`;
}

/** "5 min ago", "2 h ago", "3 d ago", or the date for anything older than 30 days. */
export function relativeTime(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now.getTime() - t) / 1000);
  if (s < 0) return 'just now';
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 30 * 86400) return `${Math.floor(s / 86400)} d ago`;
  return new Date(t).toISOString().slice(0, 10);
}

/** Codicon for a verdict / thread state. */
export function stateIcon(state: Verdict | null | undefined, archived = false): string {
  if (archived) return '$(archive)';
  switch (state) {
    case 'ok': return '$(pass)';
    case 'drift': return '$(warning)';
    case 'blocked': return '$(error)';
    default: return '$(circle-outline)';
  }
}

/** Renders any JSON value in one short line (for loosely specified protocol fields). */
export function brief(value: unknown, max = 80): string {
  let s: string;
  if (value === null || value === undefined) s = '—';
  else if (typeof value === 'string') s = value;
  else {
    try { s = JSON.stringify(value); } catch { s = String(value); }
  }
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Shortens a canonical UUID to its first block for display. */
export function shortId(id: string | null | undefined): string {
  return id ? id.split('-')[0] ?? id : '—';
}

/** "$0.42" (cents), or undefined when no money was spent or recorded. */
export function money(usd: number | null | undefined): string | undefined {
  return typeof usd === 'number' && usd > 0 ? `$${usd.toFixed(2)}` : undefined;
}

/** "1 file" / "2 files" ("1 entry" / "2 entries" with `many`). */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** Escapes text for HTML (webviews) and Markdown tooltips alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** POSIX shell quoting for a terminal command line. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
