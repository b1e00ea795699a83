"""`sessionkeeper mcp`: the recovery contract offered to the agent itself, as MCP tools over stdio.

Mid-session an agent acts on what it believes — its branch, the commands it started, the files
it last read. These tools let it ask instead, about its own session: the hook journal of its
agent session (Claude Code names it in the server's environment, Codex in every call's `_meta`),
else the workspace's current thread.

    target.py    which session a call is about (the agent's session id, else the workspace's)
    reading.py   one session read through the Keeper: its journal state, the state at a seq
    drift.py     drift_since: branch, HEAD and files changed since a seq, and who changed them
    tools.py     the tools as plain Python over a Keeper (unit-tested without stdio)
    shape.py     results kept short, redacted and plain (what the model reads)
    policy.py    whether `rewind` may change files (git config sessionkeeper.mcpRewind, off)
    server.py    the MCP SDK's stdio server: the tools, their descriptions, errors as tool errors

Invariants: every tool reads through the Keeper's public methods and the recovery contract's own
machinery (replay, assess, the subsystems), never a file of the store; nothing is written except
by `rewind` when the policy allows it; no network; bad input is a tool error the model can read.
Only `server.py` imports the MCP SDK, and only `sessionkeeper mcp` imports `server.py`.

The top layer beside `cli`: it may import any part of the package but cli.
"""
