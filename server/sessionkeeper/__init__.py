"""Session Keeper: record agent sessions as append-only logs and resume them honestly.

Rooms, top to bottom: the surfaces (`cli`, `mcp`, `lsp`), the adapters (`hooks`, `integrations`),
the Keeper (`api`, `keeper/`) with `demo` and `render`, one live session (`session/`), the contract
(`recovery/`) beside the agents' log readers (`agents/`), the disk (`store/`), the record schema
(`schema/`) and, at the root on purpose, the vocabulary every room uses (`events`, `ids`, `errors`,
`clock`, `constraints`, `policy`, `redact`, `jsontext`). A room imports only rooms below it
(`tests/unit/test_architecture.py`).
"""

__version__ = "0.1.0"


def with_site() -> None:
    """Give a process started without `site` (`python -S`, as the installed hooks start) its
    site-packages; called before each import beyond the standard library that a hook can reach
    (the full hook, the redaction automaton, platformdirs); a no-op otherwise."""
    import sys

    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()
