"""Commit trailers and the git hooks that add them, in real repositories (`repo`, `store_dir`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from sessionkeeper.errors import InvalidId
from sessionkeeper.recovery.git_hook import commit_msg_guard, is_ours, prepare_commit_msg
from sessionkeeper.recovery.trailers import (
    KNOWN_AGENTS,
    Coauthor,
    add_trailers,
    agent_authored,
    agent_lines,
    commit_trailers,
    staged_lines,
)
from sessionkeeper.store.blobs import BlobStore
from tests.conftest import git
from tests.file_session import FileSession

THREAD = str(uuid.UUID(int=7))
CMD = Path(__file__).resolve().parent / "trailer_hook_cmd.py"
SERVER = Path(__file__).resolve().parents[3] / "server"
AGENT_CODE = b"def charge(amount):\n    return round(amount, 2)  # banker's rounding\n"


def test_commit_trailers_name_the_agent_and_the_thread() -> None:
    """Fixture: none; Claude's identity and a thread id."""
    assert commit_trailers(coauthor=KNOWN_AGENTS["claude"], thread_id=THREAD) == (
        "Co-authored-by: Claude <noreply@anthropic.com>", f"Agent-Session: {THREAD}")
    with pytest.raises(InvalidId):
        commit_trailers(coauthor=KNOWN_AGENTS["codex"], thread_id="not-a-thread\nEvil: yes")
    with pytest.raises(ValueError):
        Coauthor("Bot\nSigned-off-by: someone", "x@y")


def test_agent_lines_are_the_lines_agent_versions_added(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; the agent edits payment.py, then the user adds a line of their own."""
    session = FileSession(repo, BlobStore(store_dir))
    session.write("payment.py", AGENT_CODE + b"}\n")
    session.write("payment.py", AGENT_CODE + b"}\n# user note\n", author="user")
    lines = agent_lines(session.history, read=session.blobs.get)
    assert lines == {"payment.py": frozenset({"return round(amount, 2)  # banker's rounding"})}


def test_staged_lines_are_the_added_lines_of_the_index_relative_to_the_workspace(repo: Path) -> None:
    """Fixture: `repo` with a staged edit of payment.py, a staged new file with a space and an
    accent in its name, and an unstaged edit; then the same seen from a subdirectory."""
    (repo / "payment.py").write_text("def charge(amount):\n    return amount * 2\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "café notes.md").write_text("# notes\n\n")
    git(repo, "add", ".")
    (repo / "test_payment.py").write_text("unstaged\n")
    assert staged_lines(repo) == {"payment.py": frozenset({"return amount * 2"}),
                                  "sub/café notes.md": frozenset({"# notes"})}
    assert staged_lines(repo / "sub") == {"café notes.md": frozenset({"# notes"})}


def test_agent_authored_needs_one_shared_line_in_the_same_file() -> None:
    """Fixture: none; staged and agent lines as sets."""
    agent = {"a.py": {"x = 1"}, "b.py": {"y = 2"}}
    assert agent_authored({"a.py": {"x = 1", "z"}, "b.py": {"other"}, "c.py": {"y = 2"}}, agent) == ("a.py",)
    assert agent_authored({}, agent) == ()


def test_add_trailers_is_idempotent_and_keeps_comments_below(tmp_path: Path) -> None:
    """Fixture: a commit message file as git prepares it (subject, body, comment block)."""
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("Fix rounding\n\nBody.\n\n# Please enter the commit message\n# On branch main\n")
    trailers = commit_trailers(coauthor=KNOWN_AGENTS["claude"], thread_id=THREAD)
    assert add_trailers(message, trailers, cwd=tmp_path)
    text = message.read_text()
    assert text == ("Fix rounding\n\nBody.\n\nCo-authored-by: Claude <noreply@anthropic.com>\n"
                    f"Agent-Session: {THREAD}\n\n# Please enter the commit message\n# On branch main\n")
    assert not add_trailers(message, trailers, cwd=tmp_path)
    assert message.read_text() == text


class Hooked:
    """`repo` with both hooks installed, running trailer_hook_cmd.py over a FileSession's history."""

    def __init__(self, repo: Path, store: Path, tmp: Path, *, command: list[str] | None = None,
                 timeout_s: int = 5) -> None:
        self.repo = repo
        self.session = FileSession(repo, BlobStore(store))
        self.history_file = tmp / "history.json"
        hooks = repo / ".git" / "hooks"
        script = prepare_commit_msg(command=command or [sys.executable, str(CMD)], timeout_s=timeout_s)
        for name, text in (("prepare-commit-msg", script), ("commit-msg", commit_msg_guard())):
            (hooks / name).write_text(text)
            (hooks / name).chmod(0o755)
        path = os.pathsep.join(filter(None, (str(SERVER), os.environ.get("PYTHONPATH"))))
        self.env = {**os.environ, "PYTHONPATH": path, "SK_TEST_HISTORY": str(self.history_file),
                    "SK_TEST_STORE": str(store), "SK_TEST_THREAD": THREAD,
                    "GIT_AUTHOR_NAME": "U", "GIT_AUTHOR_EMAIL": "u@example.com",
                    "GIT_COMMITTER_NAME": "U", "GIT_COMMITTER_EMAIL": "u@example.com",
                    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "GIT_EDITOR": "true"}

    def commit(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Save the history, then run a real `git commit` with the hooks."""
        self.history_file.write_text(json.dumps(self.session.history))
        return subprocess.run(["git", "commit", "-q", *args], cwd=self.repo, env=self.env,
                              capture_output=True, text=True)

    def message(self) -> str:
        return git(self.repo, "log", "-1", "--format=%B")


def test_a_commit_with_the_agent_s_lines_gets_the_trailers_once(repo: Path, store_dir: Path,
                                                                 tmp_path: Path) -> None:
    """Fixture: `Hooked` `repo`; the agent edits payment.py, the user commits it, then amends."""
    hooked = Hooked(repo, store_dir, tmp_path)
    hooked.session.write("payment.py", AGENT_CODE)
    git(repo, "add", "payment.py")
    done = hooked.commit("-m", "Round charges")
    assert done.returncode == 0, done.stderr
    expected = f"Round charges\n\nCo-authored-by: Claude <noreply@anthropic.com>\nAgent-Session: {THREAD}"
    assert hooked.message() == expected
    assert hooked.commit("--amend", "--no-edit").returncode == 0
    assert hooked.message() == expected  # idempotent


def test_a_commit_without_the_agent_s_lines_gets_no_trailer(repo: Path, store_dir: Path,
                                                             tmp_path: Path) -> None:
    """Fixture: `Hooked` `repo`; the agent edited payment.py, the user commits only their own file."""
    hooked = Hooked(repo, store_dir, tmp_path)
    hooked.session.write("payment.py", AGENT_CODE)
    (repo / "README.md").write_text("the user's readme\n")
    git(repo, "add", "README.md")
    assert hooked.commit("-m", "Docs").returncode == 0
    assert hooked.message() == "Docs"


@pytest.mark.parametrize("command", [["false"], ["sleep", "30"], ["/nonexistent/sessionkeeper"]])
def test_a_failing_or_hanging_command_never_breaks_the_commit(repo: Path, store_dir: Path,
                                                              tmp_path: Path, command: list[str]) -> None:
    """Fixture: `Hooked` `repo` whose command fails, hangs past its 1 s limit, or does not exist."""
    hooked = Hooked(repo, store_dir, tmp_path, command=command, timeout_s=1)
    hooked.session.write("payment.py", AGENT_CODE)
    git(repo, "add", "payment.py")
    done = hooked.commit("-m", "Still commits")
    assert done.returncode == 0
    assert hooked.message() == "Still commits"
    assert done.stderr.strip() == ("sessionkeeper: commit trailers not added "
                                   "(run `sessionkeeper trailer` to see why)")


def test_quitting_the_editor_on_an_empty_message_still_aborts_the_commit(repo: Path, store_dir: Path,
                                                                        tmp_path: Path) -> None:
    """Fixture: `Hooked` `repo`; agent lines staged, `git commit` with an editor that writes nothing."""
    hooked = Hooked(repo, store_dir, tmp_path)
    hooked.session.write("payment.py", AGENT_CODE)
    git(repo, "add", "payment.py")
    head = git(repo, "rev-parse", "HEAD")
    done = hooked.commit()
    assert done.returncode != 0 and "empty commit message" in done.stderr
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_hook_that_was_there_before_runs_first_and_keeps_its_verdict(repo: Path, store_dir: Path,
                                                                       tmp_path: Path) -> None:
    """Fixture: `Hooked` `repo` with the user's earlier prepare-commit-msg kept beside ours."""
    hooked = Hooked(repo, store_dir, tmp_path)
    previous = repo / ".git" / "hooks" / "prepare-commit-msg.pre-sessionkeeper"
    previous.write_text("#!/bin/sh\nprintf '\\nTicket: PAY-1\\n' >> \"$1\"\n")
    previous.chmod(0o755)
    hooked.session.write("payment.py", AGENT_CODE)
    git(repo, "add", "payment.py")
    assert hooked.commit("-m", "Chained").returncode == 0
    assert hooked.message().splitlines()[-3:] == [
        "Ticket: PAY-1", "Co-authored-by: Claude <noreply@anthropic.com>", f"Agent-Session: {THREAD}"]
    previous.write_text("#!/bin/sh\nexit 1\n")
    assert hooked.commit("--allow-empty", "-m", "Refused").returncode != 0


def test_generated_hooks_are_recognised_as_ours_and_others_are_not() -> None:
    """Fixture: none; the two generated scripts and a foreign hook."""
    assert is_ours(prepare_commit_msg(command=["sessionkeeper", "trailer", "--hook"]))
    assert is_ours(commit_msg_guard())
    assert not is_ours("#!/bin/sh\n# husky\nexit 0\n")
    with pytest.raises(ValueError):
        prepare_commit_msg(command=[], timeout_s=5)
