"""The Keeper: a facade (`facade.Keeper`) over services built once in its `__init__`.

`ground` (settings; the store, client and hooks made on first need; the open sessions) is what
every service stands on. Services, each handed only the others it uses, in the order they are
built: `sharing` (the shared index: push, pull, leases) → `sessions` (start, continue, attach) →
`journals` (the agents' hook journals) → `agent_threads` (the agents' own sessions) → `catalog`
(list, replay) → `resuming` (`Recovery`: check, resume, fork) → `content` (diff, rewind,
trailers, gc) and `upkeep` (archive, delete, fsck, reindex). Helpers beside them: `assessing`
(a replayed thread against a workspace), `listing` (resume estimates of a page), `journal_fold`
(a spool folded into its journal), `rewinding` (what a rewind records).

No service inherits from another or reaches back into the Keeper. The package may import
session, recovery, agents, store and the vocabulary; never a surface (cli, lsp, mcp, hooks,
integrations). This file loads nothing.
"""
