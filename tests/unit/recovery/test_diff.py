"""Unified diffs of a session's changes from blobs, with each version's author (`repo`, `store_dir`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sessionkeeper.recovery.diff import as_dict, diff_history, render
from sessionkeeper.store.blobs import BlobStore
from tests.conftest import git
from tests.file_session import FileSession

ORIGINAL = b"def charge(amount):\n    return amount\n"
AGENT1 = b"def charge(amount):\n    return round(amount, 2)\n"
AGENT2 = b"def charge(amount, fee=0):\n    return round(amount + fee, 2)\n"
USER = b"def charge(amount, fee=0):\n    # rounding: see ADR 7\n    return round(amount + fee, 2)"


def _session(repo: Path, store_dir: Path) -> FileSession:
    """payment.py: agent, agent, then the user (no newline at the end); refund.py created by the agent."""
    session = FileSession(repo, BlobStore(store_dir))
    session.event()
    session.write("payment.py", AGENT1)
    session.write("payment.py", AGENT2)
    session.write("refund.py", b"def refund(x):\n    return -x\n")
    session.write("payment.py", USER, author="user")
    return session


def test_each_version_is_diffed_against_the_one_before_with_its_author(repo: Path, store_dir: Path) -> None:
    """Fixture: `_session` over `repo`."""
    session = _session(repo, store_dir)
    diffs = diff_history(session.history, blobs=session.blobs, path="payment.py")
    sides = [(d.old.seq if d.old else "unknown", d.new.seq, d.author) for d in diffs]
    assert sides == [(None, 2, "agent"), (2, 3, "agent"), (3, 5, "user")]
    first = diffs[0].text or ""
    assert first.startswith("--- a/payment.py\t(before the session)\n+++ b/payment.py\t(seq 2, agent)\n")
    assert "-    return amount\n+    return round(amount, 2)\n" in first
    last = diffs[2].text or ""
    assert last.endswith("+    return round(amount + fee, 2)\n\\ No newline at end of file\n")


def test_the_rendered_diffs_apply_with_git_and_rebuild_the_final_files(repo: Path, store_dir: Path,
                                                                        tmp_path: Path) -> None:
    """Fixture: `_session` over `repo`; its diffs applied in turn with `git apply` to a clean clone."""
    session = _session(repo, store_dir)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    for d in diff_history(session.history, blobs=session.blobs):
        subprocess.run(["git", "apply", "-"], cwd=clone, input=(d.text or "").encode(), check=True)
    assert (clone / "payment.py").read_bytes() == USER
    assert (clone / "refund.py").read_bytes() == (repo / "refund.py").read_bytes()


def test_a_seq_window_and_squash_give_one_diff_per_file_with_every_author(repo: Path,
                                                                          store_dir: Path) -> None:
    """Fixture: `_session` over `repo`; from seq 2 to the end, squashed."""
    session = _session(repo, store_dir)
    window = diff_history(session.history, blobs=session.blobs, from_seq=2, to_seq=3)
    assert [(d.path, d.old.seq, d.new.seq) for d in window] == [("payment.py", 2, 3)]  # type: ignore[union-attr]
    squashed = diff_history(session.history, blobs=session.blobs, from_seq=2, squash=True)
    assert [(d.path, d.author) for d in squashed] == [("payment.py", "agent+user"), ("refund.py", "agent")]
    assert "-    return round(amount, 2)\n" in (squashed[0].text or "")


def test_a_created_file_diffs_from_dev_null(repo: Path, store_dir: Path) -> None:
    """Fixture: `_session` over `repo`; refund.py was created by the agent, then deleted."""
    session = _session(repo, store_dir)
    session.delete("refund.py")
    created, deleted = diff_history(session.history, blobs=session.blobs, path="refund.py")
    assert (created.text or "").startswith("--- /dev/null\t(before the session)\n+++ b/refund.py")
    assert (deleted.text or "").startswith("--- a/refund.py\t(seq 4, agent)\n+++ /dev/null\t(seq 6, agent)")


def test_versions_without_readable_content_are_named_instead_of_diffed(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; a binary logo.png version, and a text version whose blob was deleted."""
    session = FileSession(repo, BlobStore(store_dir))
    session.write("logo.png", b"\x89PNG\0\0")
    session.write("notes.md", b"one\n")
    session.write("notes.md", b"two\n")
    key = session.history["notes.md"][0]["hash"]
    (session.blobs.root / key[:2] / key[2:]).unlink()
    by_path = {(d.path, d.new.seq): d for d in diff_history(session.history, blobs=session.blobs)}
    logo = by_path[("logo.png", 1)]
    assert logo.text is None and logo.note == "seq 1, agent: content not stored (binary)"
    broken = by_path[("notes.md", 3)]
    assert broken.text is None and "blob_missing" in broken.note
    shown = render(list(by_path.values()))
    assert "# seq 1, agent: content not stored (binary)\n" in shown
    assert as_dict(logo)["diff"] is None and as_dict(logo)["author"] == "agent"


def test_a_history_without_content_before_its_first_version_says_so(store_dir: Path) -> None:
    """Fixture: `store_dir`; a hand-made history with no before_hash (recorded before blobs existed)."""
    blobs = BlobStore(store_dir)
    key = blobs.put(b"x\n")
    [only] = diff_history({"a.py": [{"seq": 3, "hash": key, "author": "agent"}]}, blobs=blobs)
    assert only.old is None and only.text is None and "no content is known" in only.note


def test_a_change_of_bytes_that_are_not_utf8_shows_in_the_diff(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; menu.txt in Latin-1, the agent changing one accented letter for another."""
    session = FileSession(repo, BlobStore(store_dir))
    session.write("menu.txt", b"caf\xe9 cr\xe8me\n")
    session.write("menu.txt", b"caf\xe8 cr\xe8me\n")
    _created, changed = diff_history(session.history, blobs=session.blobs, path="menu.txt")
    assert "-caf\\xe9 cr\\xe8me\n+caf\\xe8 cr\\xe8me\n" in (changed.text or "")


def test_a_form_feed_or_a_lone_carriage_return_is_no_line_break_in_the_diff(
        repo: Path, store_dir: Path, tmp_path: Path) -> None:
    """Fixture: `repo`; the agent creates pages.c (a form feed between functions, a lone CR in a
    string) and edits it; its diffs applied with `git apply` to a clean clone."""
    session = FileSession(repo, BlobStore(store_dir))
    session.write("pages.c", b"int a;\n\x0c\nchar *s = \"x\ry\";\nint b;\n")
    session.write("pages.c", b"int a;\n\x0c\nchar *s = \"x\ry\";\nint c;\n")
    diffs = diff_history(session.history, blobs=session.blobs, path="pages.c")
    assert "@@ -1,4 +1,4 @@" in (diffs[1].text or "") and "No newline" not in render(diffs)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    for d in diffs:
        subprocess.run(["git", "apply", "-"], cwd=clone, input=(d.text or "").encode(), check=True)
    assert (clone / "pages.c").read_bytes() == (repo / "pages.c").read_bytes()
