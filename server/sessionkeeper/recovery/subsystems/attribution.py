"""Which file changes are the agent's and which the user's or something external's.

Folds file_change records itself (so it never reaches into another subsystem's state while
folding); at validation it asks file_history which files were changed outside the session.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .base import Findings, Invalidation, Record, Subsystem, Workspace, register
from .file_history import FileHistory, norm_path

AUTHORS = ("agent", "user", "external")


@register
class Attribution(Subsystem):
    """path -> {agent: n, user: n, external: n, last: author} counted over file_change records."""

    name = "attribution"
    depends_on = ("file_history",)
    handles = frozenset({"file_change"})

    def __init__(self) -> None:
        self.files: dict[str, dict[str, Any]] = {}

    def apply(self, record: Record) -> None:
        """Count one change of a file by its author (a `seen` record changes nothing)."""
        if record.get("change") == "seen":
            return
        author = record.get("author", "agent")
        row = self.files.setdefault(norm_path(record["path"]), {**dict.fromkeys(AUTHORS, 0)})
        row[author] = row.get(author, 0) + 1
        row["last"] = author

    def snapshot(self) -> dict[str, Any]:
        """Return {"files": {path: counts}}."""
        return {"files": copy.deepcopy(self.files)}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.files = copy.deepcopy(state.get("files", {}))

    def by_author(self) -> dict[str, list[str]]:
        """Return sorted paths changed only by the agent / the user / externally, or mixed."""
        out: dict[str, list[str]] = {"agent": [], "user": [], "external": [], "mixed": []}
        for path in sorted(self.files):
            authors = [a for a in AUTHORS if self.files[path].get(a)]
            out[authors[0] if len(authors) == 1 else "mixed"].append(path)
        return out

    def agent_files(self) -> list[str]:
        """Return the sorted paths the agent changed (alone or together with someone else)."""
        return sorted(p for p, row in self.files.items() if row.get("agent"))

    def trailer(self, *, key: str = "Agent-Changed") -> str | None:
        """Return a commit trailer line listing the agent-changed files, or None if none."""
        files = self.agent_files()
        return f"{key}: {', '.join(files)}" if files else None

    def validate(self, workspace: Workspace, deps: Mapping[str, Subsystem]) -> Findings:
        """Mark attribution incomplete for files changed outside the session since last recorded."""
        history = deps["file_history"]
        assert isinstance(history, FileHistory)
        diffs = history.disk_differences(workspace)
        found = [Invalidation(self.name, f"{d.recorded['path']} was changed outside the session; "
                                         "its attribution is incomplete")
                 for d in diffs if d.recorded["path"] in self.files]
        return Findings(invalidations=found)

    def summary(self) -> dict[str, Any]:
        """Return the paths by author and the commit trailer."""
        return {**self.by_author(), "trailer": self.trailer()}

    def headline(self) -> str:
        """The files the agent changed."""
        files = self.agent_files()
        return ", ".join(files) if files else "no agent changes"
