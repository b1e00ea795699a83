/**
 * `sessionKeeper.*` settings: reading them through an injected getter, and turning them into the
 * server launch (argv + env). Pure — no `vscode` import.
 */

import type { Durability } from './protocol';

export const SECTION = 'sessionKeeper';

export interface Settings {
  pythonPath: string;
  serverCommand: string[];
  storePath: string;
  durability: Durability;
  autoResume: boolean;
  redaction: boolean;
  /** What "Install into the selected interpreter" passes to pip. */
  installSpec: string;
  /** The agents whose own session logs the server lists (codex, claude; empty: none). */
  agents: string[];
  /** Codex's home to read; empty: the server's default ($CODEX_HOME, else ~/.codex). */
  codexHome: string;
  /** Claude Code's config dir to read; empty: $CLAUDE_CONFIG_DIR, else ~/.claude. */
  claudeHome: string;
  /** Hermes Agent's home to read; empty: $HERMES_HOME, else ~/.hermes. */
  hermesHome: string;
  /** OpenClaw's state dir to read; empty: $OPENCLAW_STATE_DIR, else ~/.openclaw. */
  openclawHome: string;
  /** A shared index (postgresql://user@host/db) to share sessions across machines; empty: the server's $SESSIONKEEPER_INDEX, else none. */
  index: string;
}

/** Settings whose change requires a server restart. */
export const RESTART_KEYS = ['pythonPath', 'serverCommand', 'storePath', 'durability', 'redaction', 'agents', 'codexHome', 'claudeHome', 'hermesHome', 'openclawHome', 'index'] as const;

/** The agents read when the setting is missing or not a list. */
export const DEFAULT_AGENTS: readonly string[] = ['codex', 'claude', 'hermes', 'openclaw'];

/** The part of vscode.WorkspaceConfiguration used here. */
export interface ConfigGetter {
  get<T>(key: string): T | undefined;
}

const DURABILITY: readonly Durability[] = ['none', 'written', 'durable'];

/** Reads and validates the settings, falling back to defaults on bad values. */
export function readSettings(cfg: ConfigGetter): Settings {
  const str = (k: string): string => {
    const v = cfg.get<unknown>(k);
    return typeof v === 'string' ? v.trim() : '';
  };
  const cmd = cfg.get<unknown>('serverCommand');
  const durability = cfg.get<unknown>('durability');
  const agents = cfg.get<unknown>('agents');
  return {
    pythonPath: str('pythonPath'),
    serverCommand: Array.isArray(cmd) ? cmd.filter((x): x is string => typeof x === 'string' && x.length > 0) : [],
    storePath: str('storePath'),
    durability: DURABILITY.includes(durability as Durability) ? (durability as Durability) : 'written',
    autoResume: cfg.get<unknown>('autoResume') === true,
    redaction: cfg.get<unknown>('redaction') !== false,
    installSpec: str('installSpec') || 'sessionkeeper',
    agents: Array.isArray(agents) ? agentIds(agents) : [...DEFAULT_AGENTS],
    codexHome: str('codexHome'),
    claudeHome: str('claudeHome'),
    hermesHome: str('hermesHome'),
    openclawHome: str('openclawHome'),
    index: str('index').trim(),
  };
}

/** The initializationOptions `index`, only when set (the URL goes to the server as given; it is never logged here). */
export function sharedOptions(s: Settings): { index?: string } {
  return s.index ? { index: s.index } : {};
}

/** The agent ids of a list setting: strings, trimmed, lower-case, each once (unknown ids go to the server, which says so). */
function agentIds(raw: unknown[]): string[] {
  const ids = raw.filter((x): x is string => typeof x === 'string').map((x) => x.trim().toLowerCase()).filter(Boolean);
  return [...new Set(ids)];
}

/** The server's initializationOptions for the agent sources: which agents, and the homes given. */
export interface AgentOptions {
  agents: string[];
  codexHome?: string;
  claudeHome?: string;
  hermesHome?: string;
  openclawHome?: string;
}

/** `agents` always (an empty list turns every agent off); a home only when set, with paths expanded. */
export function agentOptions(s: Settings, ctx: LaunchContext = {}): AgentOptions {
  return {
    agents: [...s.agents],
    ...(s.codexHome ? { codexHome: expandPath(s.codexHome, ctx) } : {}),
    ...(s.claudeHome ? { claudeHome: expandPath(s.claudeHome, ctx) } : {}),
    ...(s.hermesHome ? { hermesHome: expandPath(s.hermesHome, ctx) } : {}),
    ...(s.openclawHome ? { openclawHome: expandPath(s.openclawHome, ctx) } : {}),
  };
}

export interface Launch {
  command: string;
  /** Arguments before the `--stdio` that vscode-languageclient appends. */
  args: string[];
  /** Variables to add to the inherited environment. */
  env: Record<string, string>;
  /** Where the interpreter came from, for the log. */
  source: 'serverCommand' | 'pythonPath' | 'python extension' | 'default';
}

export interface LaunchContext {
  /** The Python extension's active interpreter, when that extension is installed. */
  activeInterpreter?: string | undefined;
  /** Replaces `${workspaceFolder}` and `${userHome}` in paths. */
  workspaceFolder?: string | undefined;
  userHome?: string | undefined;
}

/** Substitutes `${workspaceFolder}`, `${userHome}` and a leading `~`. */
export function expandPath(p: string, ctx: LaunchContext): string {
  let s = p;
  if (ctx.workspaceFolder) s = s.split('${workspaceFolder}').join(ctx.workspaceFolder);
  if (ctx.userHome) {
    s = s.split('${userHome}').join(ctx.userHome);
    if (s === '~' || s.startsWith('~/')) s = ctx.userHome + s.slice(1);
  }
  return s;
}

/**
 * The server command: `serverCommand` when set, else `<python> -m sessionkeeper serve` with the
 * python from `pythonPath`, else the Python extension's interpreter, else `python3`.
 */
export function resolveLaunch(s: Settings, ctx: LaunchContext = {}): Launch {
  const env: Record<string, string> = {
    PYTHONUNBUFFERED: '1',
    SESSIONKEEPER_DURABILITY: s.durability,
    SESSIONKEEPER_REDACTION: s.redaction ? '1' : '0',
  };
  if (s.storePath) env.SESSIONKEEPER_HOME = expandPath(s.storePath, ctx);
  const [head, ...rest] = s.serverCommand.map((a) => expandPath(a, ctx));
  if (head) return { command: head, args: rest, env, source: 'serverCommand' };
  const serve = ['-m', 'sessionkeeper', 'serve'];
  if (s.pythonPath) return { command: expandPath(s.pythonPath, ctx), args: serve, env, source: 'pythonPath' };
  if (ctx.activeInterpreter) return { command: ctx.activeInterpreter, args: serve, env, source: 'python extension' };
  return { command: 'python3', args: serve, env, source: 'default' };
}

/** True when a configuration change touches a setting that needs a restart. */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_KEYS.some((k) => affects(`${SECTION}.${k}`));
}
