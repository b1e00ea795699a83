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
};

/** Name and icons of an agent id (null / empty: Session Keeper's own threads). */
export function agentInfo(id: string | null | undefined): AgentInfo {
  const key = id || 'native';
  return KNOWN[key] ?? { id: key, name: key.charAt(0).toUpperCase() + key.slice(1), icon: 'agent-other.svg', codicon: 'robot' };
}
