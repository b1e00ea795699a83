"""How far an agent session's journal has folded its tool hooks' spool (`journal_fold`).

The last record written for each spooled call carries `data.spool = [token, end, at]`: the spool
file's token, the offset just after the call's line, and when the hook ran. A call whose line ends
at or before its file's mark is in the journal already, so folding twice never counts it twice.
"""

from __future__ import annotations

from typing import Any

from .base import Record, Subsystem, register

KEPT = 16
"""Spool files remembered (a session's spools folded longest ago are forgotten first)."""


@register
class Spooled(Subsystem):
    """token -> the end offset of the last call folded from that spool file."""

    name = "spooled"
    handles = frozenset({"operation", "file_change", "todo", "baseline"})

    def __init__(self) -> None:
        self.marks: dict[str, int] = {}

    def apply(self, record: Record) -> None:
        """Move the mark of the record's spool file (records not folded from a spool: no-op)."""
        data = record.get("data")
        mark = data.get("spool") if isinstance(data, dict) else None
        if not (isinstance(mark, list) and len(mark) >= 2 and isinstance(mark[0], str)
                and isinstance(mark[1], int)):
            return
        token, end = mark[0], mark[1]
        self.marks[token] = max(end, self.marks.pop(token, 0))  # newest last
        while len(self.marks) > KEPT:
            del self.marks[next(iter(self.marks))]

    def folded(self, token: str | None) -> int:
        """The end offset of the last call folded from the spool file `token` (0: none)."""
        return self.marks.get(token, 0) if token is not None else 0

    def snapshot(self) -> dict[str, Any]:
        """Return {"marks": {token: end}}."""
        return {"marks": dict(self.marks)}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        marks = state.get("marks")
        self.marks = {str(k): int(v) for k, v in marks.items()} if isinstance(marks, dict) else {}
