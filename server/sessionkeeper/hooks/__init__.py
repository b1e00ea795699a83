"""Hooks inside the agents' own resume: `sessionkeeper hook <agent> <event>` and `hooks install`.

Codex CLI and Claude Code run a command at session start, before each prompt and around each
tool call, with the session id, the transcript path and the cwd as JSON on stdin. Session Keeper
answers them in each agent's own output format (`answers`): it records a real baseline and the
agent's tool calls in its own journal of the agent session, and on resume it checks the workspace
and tells the model (and the user) what changed — or stops the resume. `install` merges the hook
entries into the agents' config and restores it byte for byte.

Invariant: a hook never breaks the agent — it exits 0, within a hard time limit below the agent's
own hook timeout, prints at most one line of its own on stderr, and never reaches the network.
Importing this package imports nothing: the hook is a CLI start and imports only what it needs.

It may import the Keeper (`api`, `keeper`), session and what lies below them; never cli, lsp or mcp.
"""
