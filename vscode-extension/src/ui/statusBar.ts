/**
 * The status-bar item: says what it is ("Agent sessions (3)") and, when a session is current,
 * shows it (title, branch, todos, tests) with its live drift. Pure rendering of a Status plus a
 * tiny controller that owns one item (injected, so tests use a plain object).
 */

import { agentInfo } from '../agents';
import { fraction, shortId } from '../format';
import type { Status } from '../protocol';
import { renderDifference } from './drift';

export type ServerPhase = 'starting' | 'running' | 'stopped' | 'failed';

export interface StatusView {
  text: string;
  tooltip: string;
  /** True when the item should draw attention (drift / blocked / server failure). */
  warning: boolean;
  /** The command a click runs. */
  command: string;
}

export const PICK = 'sessionKeeper.pickSession';
export const FIX = 'sessionKeeper.showServerProblem';
const MAX_TITLE = 40;

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export interface StatusContext {
  phase?: ServerPhase;
  /** How many threads the Sessions view lists ("3", "100+"); undefined: not listed yet. */
  count?: string | undefined;
  /** Why the server is not running (first run: the interpreter lacks the package, ...). */
  problem?: string | undefined;
  /** The count is of every workspace's threads (the Sessions view's toggle). */
  allWorkspaces?: boolean;
}

/** Live drift of a Status: the state now, else the verdict it was resumed with. */
export function liveState(s: Status): 'ok' | 'drift' | 'blocked' {
  const state = s.state ?? (s.drift ? 'drift' : s.verdict ?? 'ok');
  return state === 'blocked' ? 'blocked' : state === 'drift' ? 'drift' : 'ok';
}

/** Renders the status-bar text and tooltip for the current session (or its absence). */
export function renderStatus(status: Status | null, ctx: StatusContext = {}): StatusView {
  const phase = ctx.phase ?? 'running';
  if (phase === 'starting') {
    return { text: '$(sync~spin) Agent sessions', tooltip: 'Session Keeper: starting its server…', warning: false, command: PICK };
  }
  if (phase === 'failed' || phase === 'stopped') {
    const why = ctx.problem ?? `the server ${phase === 'failed' ? 'failed' : 'stopped'}`;
    return {
      text: '$(debug-disconnect) Agent sessions: server not running',
      tooltip: `Session Keeper: ${why}.\nClick for what to do.`,
      warning: phase === 'failed', command: FIX,
    };
  }
  if (!status) {
    const n = ctx.count;
    const where = ctx.allWorkspaces ? 'in all workspaces' : 'in this workspace';
    return {
      text: `$(history) Agent sessions${n !== undefined ? ` (${n})` : ''}`,
      tooltip: `Session Keeper: ${n === undefined ? 'agent sessions of this workspace' : n === '0' ? `no agent sessions recorded ${where} yet` : `${n} agent session${n === '1' ? '' : 's'} ${where}`} (Session Keeper, Codex, Claude Code); none is current.\nClick to pick one.`,
      warning: false, command: PICK,
    };
  }
  const state = liveState(status);
  const icon = state === 'blocked' ? '$(error)' : state === 'drift' ? '$(warning)' : `$(${agentInfo(status.agent).codicon})`;
  const parts = [`${icon} ${clip(status.title || 'Untitled', MAX_TITLE)}`];
  const branchMove = status.differences.find((d) => d.kind === 'branch');
  if (branchMove) parts.push(`$(git-branch) ${String(branchMove.recorded ?? 'detached')} → ${String(branchMove.current ?? 'detached')}`);
  else if (status.branch) parts.push(`$(git-branch) ${status.branch}`);
  if (state !== 'ok' && !branchMove && status.state_reason) parts.push(status.state_reason);
  const todos = fraction(status.todos);
  if (todos) parts.push(`$(checklist) ${todos}`);
  const tests = fraction(status.tests);
  if (tests) parts.push(`$(beaker) ${tests}${status.invalidated.some((i) => i.subsystem === 'verifier') ? ' (stale)' : ''}`);
  return { text: parts.join('  '), tooltip: renderTooltip(status), warning: state !== 'ok', command: PICK };
}

/** Multi-line tooltip with every detail of the current session and what differs now. */
export function renderTooltip(status: Status): string {
  const agent = agentInfo(status.agent);
  const lines = [
    `Session Keeper — current session: ${status.title || 'Untitled'} (${agent.name})`,
    `Thread: ${status.thread_id}`,
    `Session: ${status.session_id} (${shortId(status.session_id)})`,
    `Branch: ${status.branch ?? '—'}`,
    `Todos: ${fraction(status.todos)?.concat(' done') ?? 'none'}`,
    `Tests: ${fraction(status.tests)?.concat(' passed') ?? 'not run'}`,
    `Cost: $${(status.cost_usd ?? 0).toFixed(2)}`,
  ];
  if (status.verdict) lines.push(`Last resume verdict: ${status.verdict}`);
  const state = liveState(status);
  if (state !== 'ok') {
    lines.push('', `⚠ ${state === 'blocked' ? 'Blocked' : 'Drift'} now: ${status.state_reason ?? 'the workspace differs from the recorded baseline'}`);
    for (const d of status.differences) lines.push(`  • ${renderDifference(d)}`);
    lines.push('The agent would continue in a different environment: switch back, or resume to decide.');
  }
  for (const i of status.invalidated) lines.push(`Stale: ${i.subsystem} — ${i.reason}`);
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

/** Keeps one status-bar item in sync with the latest status, server phase and thread count. */
export class StatusBarController {
  private status: Status | null = null;
  private ctx: StatusContext = { phase: 'starting' };

  constructor(
    private readonly item: StatusItem,
    private readonly warningColor: unknown,
  ) {
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

  setPhase(phase: ServerPhase, problem?: string): void {
    this.ctx = { ...this.ctx, phase, problem: phase === 'running' ? undefined : problem ?? this.ctx.problem };
    this.render();
  }

  setCount(count: string | undefined, allWorkspaces = false): void {
    this.ctx = { ...this.ctx, count, allWorkspaces };
    this.render();
  }

  private render(): void {
    const view = renderStatus(this.status, this.ctx);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = view.command;
    this.item.backgroundColor = view.warning ? this.warningColor : undefined;
  }
}
