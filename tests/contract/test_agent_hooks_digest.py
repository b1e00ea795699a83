"""The digest only proves `ok` faster: whenever it says ok, the full resume check says ok too, and
for every kind of change since the session last ran it declines (the full check then reports)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.hooks import digest
from tests.conftest import git, init_repo
from tests.unit._hooks import SID, call, payload, run

Change = Callable[[Path, Path], Path]


def _nothing(repo: Path, tmp: Path) -> Path:
    return repo


def _branch(repo: Path, tmp: Path) -> Path:
    git(repo, "checkout", "-q", "-b", "other")
    return repo


def _commit(repo: Path, tmp: Path) -> Path:
    (repo / "README.md").write_text("new\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "more")
    return repo


def _detach(repo: Path, tmp: Path) -> Path:
    git(repo, "checkout", "-q", "--detach")
    return repo


def _touched_file_edited(repo: Path, tmp: Path) -> Path:
    (repo / "payment.py").write_text("changed by the user\n")
    return repo


def _touched_file_deleted(repo: Path, tmp: Path) -> Path:
    (repo / "payment.py").unlink()
    return repo


def _other_repository(repo: Path, tmp: Path) -> Path:
    return init_repo(tmp / "elsewhere", {"x": "x\n"})


def _subdirectory(repo: Path, tmp: Path) -> Path:
    (repo / "sub").mkdir()
    return repo / "sub"


def _worktree(repo: Path, tmp: Path) -> Path:
    git(repo, "worktree", "add", "-q", str(tmp / "wt"), "-b", "wt-branch")
    return tmp / "wt"


def _moved(repo: Path, tmp: Path) -> Path:
    os.rename(repo, tmp / "moved")
    return tmp / "moved"


def _symlinked(repo: Path, tmp: Path) -> Path:
    (tmp / "link").symlink_to(repo)
    return tmp / "link"


CHANGES: dict[str, tuple[Change, bool]] = {
    "nothing": (_nothing, True),
    "symlinked path to the same repository": (_symlinked, True),
    "branch switched": (_branch, False),
    "new commit": (_commit, False),
    "detached HEAD": (_detach, False),
    "touched file edited": (_touched_file_edited, False),
    "touched file deleted": (_touched_file_deleted, False),
    "another repository": (_other_repository, False),
    "a subdirectory": (_subdirectory, False),
    "a linked worktree": (_worktree, False),
    "repository moved": (_moved, False),
}


def started_with_an_edit(repo: Path, store_dir: Path) -> None:
    """A Claude start in `repo`, then an Edit of payment.py through its Pre/PostToolUse hooks."""
    call("claude", "SessionStart", repo, store_dir, source="startup")
    edit = {"tool_name": "Edit", "tool_response": {}, "tool_use_id": "toolu_e1",
            "tool_input": {"file_path": str(repo / "payment.py")}}
    call("claude", "PreToolUse", repo, store_dir, **edit)
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount, 2)\n")
    call("claude", "PostToolUse", repo, store_dir, **edit)


@pytest.mark.parametrize("name", list(CHANGES))
def test_the_digest_proves_ok_exactly_when_the_full_check_is_ok(name: str, repo: Path,
                                                                store_dir: Path,
                                                                tmp_path: Path) -> None:
    """Fixture: `repo`; a Claude start and an Edit of payment.py recorded, then one change."""
    started_with_an_edit(repo, store_dir)
    change, ok = CHANGES[name]
    where = change(repo, tmp_path)
    known = digest.load(store_dir, "claude", SID)
    assert known is not None and known.files  # payment.py is a file the session knows
    full = Keeper(store_dir).journal_keeper("claude").check_resume(SID, workspace=str(where))
    assert digest.proves_ok(known, str(where)) is ok
    assert (full.verdict == "ok") is ok, full.differences


def test_a_digest_older_than_its_journal_proves_nothing(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; a start, then the journal grows without a new digest."""
    call("codex", "SessionStart", repo, store_dir, source="startup")
    known = digest.load(store_dir, "codex", SID)
    assert digest.proves_ok(known, str(repo)) is True
    journal = Keeper(store_dir).journal("codex", SID)
    journal.record({"type": "todo", "items": [{"id": "1", "text": "x"}]})
    journal.close()
    assert digest.proves_ok(known, str(repo)) is False


@pytest.mark.parametrize("field,value", [("files", ["payment.py"]), ("baseline", "main"),
                                         ("journal", 0), ("in_doubt", {"x": 1}), ("todos", [1]),
                                         ("todos", {"total": 1}), ("headline", None),
                                         ("files", {"payment.py": 5})])
def test_a_digest_whose_fields_have_the_wrong_types_proves_nothing_and_the_resume_is_checked(
        field: str, value: object, repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; a Claude start and an Edit of payment.py, then the digest file rewritten
    with one field of another JSON type (a damaged or crafted file) and a resume in place."""
    started_with_an_edit(repo, store_dir)
    path = store_dir / "hooks" / "digests" / f"claude-{SID}.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, field: value}))
    assert digest.proves_ok(digest.load(store_dir, "claude", SID), str(repo)) is False
    done = run("claude", "SessionStart", json.dumps(payload("claude", "SessionStart", repo,
                                                            source="resume")), store_dir)
    assert done.returncode == 0 and "failed open" not in done.stderr, done.stderr
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "nothing changed since it last ran" in text


_KILLED_AT_REMEMBER = """
import json, os, sys
from sessionkeeper.hooks import respond
from sessionkeeper.hooks.payload import parse
respond._remember = lambda *a, **k: os.kill(os.getpid(), 9)  # a kill -9 just before the digest
raw = json.dumps(json.loads(sys.argv[1])).encode()
respond.respond(parse("codex", "SessionStart", raw), store=sys.argv[2])
"""


def test_a_hook_killed_after_resuming_the_journal_elsewhere_leaves_no_digest_that_proves_ok(
        repo: Path, store_dir: Path, tmp_path: Path) -> None:
    """Fixture: `repo`; a Codex start, a resume in a linked worktree (drift: the journal is resumed
    there) whose hook is killed -9 before it leaves its digest, then a resume back in `repo`."""
    call("codex", "SessionStart", repo, store_dir, source="startup")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "wt-branch")
    hook = payload("codex", "SessionStart", tmp_path / "wt", source="resume")
    done = subprocess.run([sys.executable, "-c", _KILLED_AT_REMEMBER, json.dumps(hook),
                           str(store_dir)], capture_output=True, text=True, timeout=60)
    assert done.returncode == -9, done.stderr
    full = Keeper(store_dir).journal_keeper("codex").check_resume(SID, workspace=str(repo))
    assert full.verdict == "drift"  # the journal now runs in the worktree
    assert digest.proves_ok(digest.load(store_dir, "codex", SID), str(repo)) is False
    assert call("codex", "SessionStart", repo, store_dir, source="resume").outcome == "drift"


_PAUSED_BEFORE_DIGEST = """
import json, sys, time
from pathlib import Path
from sessionkeeper.hooks import digest, respond
from sessionkeeper.hooks.payload import parse
take = digest.take
def paused(replayed):  # the journal is read; wait here until the test says go
    Path(sys.argv[3], "read").touch()
    deadline = time.monotonic() + 30
    while not Path(sys.argv[3], "go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return take(replayed)
digest.take = paused
raw = json.dumps(json.loads(sys.argv[1])).encode()
respond.respond(parse("claude", "PreToolUse", raw), store=sys.argv[2])
"""


def test_a_digest_taken_while_another_hook_wrote_the_journal_proves_nothing(
        repo: Path, store_dir: Path, tmp_path: Path) -> None:
    """Fixture: `repo`; a Claude start and an Edit of payment.py recorded; a real hook process
    (a PreToolUse) paused between reading the journal and taking its digest while a second Edit
    of payment.py is recorded by other hooks; then the user puts payment.py back as the first
    Edit left it."""
    call("claude", "SessionStart", repo, store_dir, source="startup")
    edit = {"tool_name": "Edit", "tool_response": {},
            "tool_input": {"file_path": str(repo / "payment.py")}}
    call("claude", "PreToolUse", repo, store_dir, tool_use_id="toolu_e1", **edit)
    first = "def charge(amount):\n    return round(amount, 2)\n"
    (repo / "payment.py").write_text(first)
    call("claude", "PostToolUse", repo, store_dir, tool_use_id="toolu_e1", **edit)
    flags = tmp_path / "flags"
    flags.mkdir()
    hook = payload("claude", "PreToolUse", repo, tool_name="Bash", tool_use_id="toolu_b1",
                   tool_input={"command": "ls"})
    paused = subprocess.Popen([sys.executable, "-c", _PAUSED_BEFORE_DIGEST, json.dumps(hook),
                               str(store_dir), str(flags)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not (flags / "read").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    call("claude", "PreToolUse", repo, store_dir, tool_use_id="toolu_e2", **edit)
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount, 3)\n")
    call("claude", "PostToolUse", repo, store_dir, tool_use_id="toolu_e2", **edit)
    (flags / "go").touch()
    assert paused.wait(timeout=60) == 0, paused.stderr.read() if paused.stderr else ""
    (repo / "payment.py").write_text(first)  # the user undoes the second edit by hand
    full = Keeper(store_dir).journal_keeper("claude").check_resume(SID, workspace=str(repo))
    assert full.verdict == "drift"
    assert digest.proves_ok(digest.load(store_dir, "claude", SID), str(repo)) is False
