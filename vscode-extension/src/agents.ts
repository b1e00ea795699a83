/**
 * The agents that record threads, as the editor names and draws them. The server says which agent
 * recorded a thread (`agent`: native, codex, claude, ...); an agent unknown here still shows, with
 * its own name and a generic icon, so a new agent on the server needs no extension change.
 */

export interface AgentInfo {
  id: string;
  /** What the user calls it. */
  name: string;
  /** The icon file under media/ (SVG). */
  icon: string;
  /** A codicon for places that cannot show a file (QuickPick rows, the status bar). */
  codicon: string;
}

const KNOWN: Record<string, AgentInfo> = {
  native: { id: 'native', name: 'Session Keeper', icon: 'agent-native.svg', codicon: 'history' },
  codex: { id: 'codex', name: 'Codex', icon: 'agent-codex.svg', codicon: 'terminal' },
  claude: { id: 'claude', name: 'Claude Code', icon: 'agent-claude.svg', codicon: 'sparkle' },
  hermes: { id: 'hermes', name: 'Hermes Agent', icon: 'agent-hermes.svg', codicon: 'comment-discussion' },
  openclaw: { id: 'openclaw', name: 'OpenClaw', icon: 'agent-openclaw.svg', codicon: 'layers' },
};

/** Name and icons of an agent id (null / empty: Session Keeper's own threads). */
export function agentInfo(id: string | null | undefined): AgentInfo {
  const key = id || 'native';
  return KNOWN[key] ?? { id: key, name: key.charAt(0).toUpperCase() + key.slice(1), icon: 'agent-other.svg', codicon: 'robot' };
}

/**
 * Where an agent thread's baseline (branch, commit) came from, in words: `hook` — Session Keeper's
 * hooks recorded it as the session started (exact); `log` — rebuilt from the agent's own log
 * (reconstructed). Undefined for Session Keeper's own threads (null) and unknown values.
 */
export function baselineText(baseline: string | null | undefined, agent: string | null | undefined): string | undefined {
  if (baseline === 'hook') return "exact — recorded by Session Keeper's hook when the session started (branch and commit)";
  if (baseline === 'log') return `reconstructed from ${agentInfo(agent).name}'s own log (no Session Keeper hook ran; “sessionkeeper hooks install” makes the next one exact)`;
  return undefined;
}
