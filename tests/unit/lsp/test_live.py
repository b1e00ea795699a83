"""Live drift in a few words (lsp.live.reason_of) and the files behind it (changed_paths)."""

from __future__ import annotations

from sessionkeeper.lsp.live import changed_paths, reason_of
from sessionkeeper.recovery.findings import Difference


def _file(kind: str, path: str) -> Difference:
    return Difference(kind, {"path": path, "seq": 3, "hash": "a", "author": "agent"},
                      {"path": path, "hash": None, "author": "external"}, f"{path} ...")


def test_reason_names_the_branch_move_and_counts_changed_and_missing_files() -> None:
    """No fixture: differences as a resume check makes them."""
    diffs = [Difference("branch", "fix/payment", "main"), Difference("head", "a" * 40, "b" * 40),
             _file("file_changed", "a.py"), _file("file_changed", "b.py"), _file("file_missing", "c.py")]
    assert reason_of(diffs) == "branch fix/payment → main · 2 files changed outside · 1 file missing"
    assert changed_paths(diffs) == ["a.py", "b.py", "c.py"]


def test_reason_of_a_moved_head_a_detached_checkout_and_blocking_kinds() -> None:
    """No fixture."""
    assert reason_of([Difference("head", "a" * 40, "b" * 40)]) == "HEAD aaaaaaa → bbbbbbb"
    assert reason_of([Difference("branch", "main", None)]) == "branch main → detached"
    assert reason_of([Difference("cwd_missing", "/x", None)]) == "working directory missing"
    assert reason_of([Difference("other_repository", None, None)]) == "another repository"
    assert reason_of([Difference("permissions", "a", "b")]) == "permissions"
    assert reason_of([]) is None
