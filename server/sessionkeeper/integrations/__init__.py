"""Framework adapters: Session Keeper as the storage backend of other frameworks' interfaces.

One module per framework (`langgraph`, `claude_sdk`), each importing its framework only when it
is imported itself (install `sessionkeeper[langgraph]` or `sessionkeeper[claude-sdk]`); the core
never imports this package. `live` is what both share: the threads an adapter writes to.

It may import the Keeper, session and what lies below them; never cli, lsp or mcp.
"""
