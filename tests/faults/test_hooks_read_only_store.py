"""The resume hook on a store that cannot be written (a real read-only bind mount): the resume is
checked and answered all the same, only its record is lost (said in one line)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import git, init_repo
from tests.faults.conftest import unavailable
from tests.unit._hooks import call, payload, run


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(store, read-only view): a store directory and a real read-only bind mount of it (needs
    root or CAP_SYS_ADMIN), unmounted after."""
    store, view = tmp_path / "store", tmp_path / "ro"
    store.mkdir(mode=0o700)
    view.mkdir()
    if shutil.which("mount") is None:
        unavailable("no `mount` command")
    done = subprocess.run(["mount", "--bind", str(store), str(view)], capture_output=True, text=True)
    if done.returncode != 0:
        unavailable(f"mount --bind not permitted: {done.stderr.strip() or done.returncode}")
    try:
        done = subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], capture_output=True,
                              text=True)
        if done.returncode != 0:
            unavailable(f"remount ro not permitted: {done.stderr.strip() or done.returncode}")
        yield store, view
    finally:
        subprocess.run(["umount", "-l", str(view)], capture_output=True)


def _resume(cwd: Path, view: Path) -> subprocess.CompletedProcess[str]:
    return run("codex", "SessionStart", json.dumps(payload("codex", "SessionStart", cwd,
                                                           source="resume")), view)


def test_a_blocked_resume_on_a_read_only_store_is_still_stopped(read_only: tuple[Path, Path],
                                                                 repo: Path, tmp_path: Path) -> None:
    """Fixture: `read_only`, `repo`; a Codex start recorded, then a resume in another repository."""
    store, view = read_only
    call("codex", "SessionStart", repo, store, source="startup")
    done = _resume(init_repo(tmp_path / "elsewhere", {"x": "x\n"}), view)
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert answer["continue"] is False and "blocked" in answer["stopReason"]
    assert "not recorded" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.parametrize("fast", [True, False])
def test_a_resume_on_a_read_only_store_tells_the_model_what_changed_or_that_nothing_did(
        fast: bool, read_only: tuple[Path, Path], repo: Path) -> None:
    """Fixture: `read_only`, `repo`; a Codex start recorded, a resume in place (digest or full
    check), then a new commit and a resume with drift."""
    store, view = read_only
    call("codex", "SessionStart", repo, store, source="startup")
    if not fast:
        next((store / "hooks" / "digests").iterdir()).unlink()
    done = _resume(repo, view)
    assert done.returncode == 0, done.stderr
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "nothing changed since it last ran" in text
    (repo / "payment.py").write_text("changed\n")
    git(repo, "commit", "-qam", "more")
    done = _resume(repo, view)
    assert done.stdout, done.stderr
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "CHANGED" in text and "not recorded" in done.stderr
