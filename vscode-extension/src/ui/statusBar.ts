/**
 * The status-bar item for the current thread: pure rendering of a `Status` into text and tooltip,
 * plus a tiny controller that owns one item (injected, so tests use a plain object).
 */

import { fraction, shortId } from '../format';
import type { Status } from '../protocol';

export type ServerPhase = 'starting' | 'running' | 'stopped' | 'failed';

export interface StatusView {
  text: string;
  tooltip: string;
  /** True when the item should draw attention (drift / blocked / server failure). */
  warning: boolean;
}

const MAX_TITLE = 40;

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** Renders the status-bar text and tooltip for the current session (or its absence). */
export function renderStatus(status: Status | null, phase: ServerPhase = 'running'): StatusView {
  if (phase === 'starting') {
    return { text: '$(sync~spin) Session Keeper', tooltip: 'Session Keeper: starting the server…', warning: false };
  }
  if (phase === 'failed' || phase === 'stopped') {
    return {
      text: '$(debug-disconnect) Session Keeper',
      tooltip: `Session Keeper: server ${phase}. Run "Session Keeper: Restart Server" or open the log.`,
      warning: phase === 'failed',
    };
  }
  if (!status) {
    return { text: '$(history) No session', tooltip: 'Session Keeper: no current session.\nClick to pick a session.', warning: false };
  }
  const flagged = status.drift || status.verdict === 'drift' || status.verdict === 'blocked';
  const icon = status.verdict === 'blocked' ? '$(error)' : flagged ? '$(warning)' : '$(history)';
  const parts = [`${icon} ${clip(status.title || 'Untitled', MAX_TITLE)}`];
  if (status.branch) parts.push(`$(git-branch) ${status.branch}`);
  const todos = fraction(status.todos);
  if (todos) parts.push(`$(checklist) ${todos}`);
  const tests = fraction(status.tests);
  if (tests) parts.push(`$(beaker) ${tests}`);
  return { text: parts.join('  '), tooltip: renderTooltip(status), warning: flagged };
}

/** Multi-line tooltip with every detail of the current session. */
export function renderTooltip(status: Status): string {
  const lines = [
    `Session Keeper — ${status.title || 'Untitled'}`,
    `Thread: ${status.thread_id}`,
    `Session: ${status.session_id} (${shortId(status.session_id)})`,
    `Branch: ${status.branch ?? '—'}`,
    `Todos: ${fraction(status.todos)?.concat(' done') ?? 'none'}`,
    `Tests: ${fraction(status.tests)?.concat(' passed') ?? 'not run'}`,
    `Cost: $${(status.cost_usd ?? 0).toFixed(2)}`,
  ];
  if (status.verdict) lines.push(`Last resume verdict: ${status.verdict}`);
  if (status.drift) lines.push('⚠ The workspace differs from the recorded baseline (drift).');
  lines.push('', 'Click to pick a session.');
  return lines.join('\n');
}

/** The subset of vscode.StatusBarItem the controller uses. */
export interface StatusItem {
  text: string;
  tooltip: unknown;
  command: unknown;
  backgroundColor: unknown;
  show(): void;
}

/** Keeps one status-bar item in sync with the latest status and server phase. */
export class StatusBarController {
  private status: Status | null = null;
  private phase: ServerPhase = 'starting';

  constructor(
    private readonly item: StatusItem,
    command: string,
    private readonly warningColor: unknown,
  ) {
    item.command = command;
    this.render();
    item.show();
  }

  /** The status last shown (null: no session). */
  get current(): Status | null {
    return this.status;
  }

  setStatus(status: Status | null): void {
    this.status = status;
    this.render();
  }

  setPhase(phase: ServerPhase): void {
    this.phase = phase;
    this.render();
  }

  private render(): void {
    const view = renderStatus(this.status, this.phase);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.warning ? this.warningColor : undefined;
  }
}
