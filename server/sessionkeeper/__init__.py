"""Session Keeper: record agent sessions as append-only logs and resume them honestly.

Rooms, top to bottom: the surfaces (`cli`, `mcp`, `lsp`), the adapters (`hooks`, `integrations`),
the Keeper (`api`, `keeper/`) with `demo` and `render`, one live session (`session/`), the contract
(`recovery/`) beside the agents' log readers (`agents/`), the disk (`store/`), the record schema
(`schema/`) and, at the root on purpose, the vocabulary every room uses (`events`, `ids`, `errors`,
`clock`, `constraints`, `policy`, `redact`, `jsontext`). A room imports only rooms below it
(`tests/unit/test_architecture.py`).
"""

__version__ = "0.1.0"
