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
    server.py    the tools as MCP offers them: descriptions, input schemas, errors as tool errors
    protocol.py  MCP's stdio transport and lifecycle (JSON-RPC lines; our own: the SDK's import
                 took ~640 ms of a ~700 ms start)

Invariants: every tool reads through the Keeper's public methods and the recovery contract's own
machinery (replay, assess, the subsystems), never a file of the store; nothing is written except
by `rewind` when the policy allows it; no network; bad input is a tool error the model can read.
Only `sessionkeeper mcp` imports `server.py`; no module here imports the MCP SDK (the tests' client).

The top layer beside `cli`: it may import any part of the package but cli.
"""
