"""How long each hook may take: its hard internal limit, and the timeout written into the agent's
config (always above the limit, so the agent never has to kill a hook of ours). Standard library
only (a tool hook reads its limit here)."""

import os

BUDGET_S = {"SessionStart": 8.0, "UserPromptSubmit": 4.0, "PreToolUse": 6.0, "PostToolUse": 8.0,
            "PostToolUseFailure": 8.0, "PreCompact": 4.0, "PostCompact": 4.0, "SessionEnd": 1.0}
"""The hard internal time limit of each hook (seconds): past it the hook fails open."""
TIMEOUT_S = {"SessionStart": 15, "UserPromptSubmit": 10, "PreToolUse": 15, "PostToolUse": 15,
             "PostToolUseFailure": 15, "PreCompact": 10, "PostCompact": 10, "SessionEnd": 2}
"""The timeout written into the agent's config (Claude caps SessionEnd hooks at 1.5 s unless
configured otherwise; the 1 s limit stays below that)."""
ENV_BUDGET = "SESSIONKEEPER_HOOK_BUDGET_S"


def budget_of(event: str, env: dict[str, str] | None = None, *,
              limits: dict[str, float] | None = None) -> float:
    """The event's hard time limit (of `limits`, default the Claude/Codex ones);
    $SESSIONKEEPER_HOOK_BUDGET_S can only lower it."""
    budget = (BUDGET_S if limits is None else limits).get(event, 4.0)
    raw = (os.environ if env is None else env).get(ENV_BUDGET, "")
    try:
        lower = float(raw) if raw.strip() else budget
    except ValueError:
        return budget
    return min(budget, lower) if lower > 0 else budget
