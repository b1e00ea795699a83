"""The editor surface: a pygls 2 language server speaking the `session/` protocol (PROTOCOL.md).

Importing this package is cheap: the Keeper, pydantic, GitPython and watchfiles are imported on
first need, never at start-up.

It may import hooks, integrations, the Keeper and what lies below them; never cli or mcp.
"""
