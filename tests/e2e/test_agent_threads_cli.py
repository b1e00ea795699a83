"""Codex and Claude Code sessions through the real CLI: list, show, check, resume — read-only.

Every command here runs as a real process against agent homes written by the fixture generator
(a Codex thread and a Claude Code session that ran in a real git repository), and every one of
them is followed by a digest of both homes: nothing is ever written under an agent's root.
"""

from __future__ import annotations

import fcntl
import os
import pty
import shutil
import sqlite3
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import git, init_repo
from tests.unit._agents import claude_home, codex_home, generator, tree_digest

GEN = generator()
CODEX, CLAUDE = GEN.CODEX_THREAD, GEN.CLAUDE_SESSION


@dataclass
class Homes:
    """A store, a real repository and the two agents' homes with one session each in it."""

    store: Path
    repo: Path
    codex: Path
    claude: Path
    data_home: Path  # XDG_DATA_HOME: the per-user default store lives under it

    def digests(self) -> tuple[str, str]:
        """A digest of each agent home (every path, mode, size, mtime and byte)."""
        return tree_digest(self.codex), tree_digest(self.claude)

    def run(self, *args: str, env: dict[str, str] | None = None,
            default_store: bool = False) -> subprocess.CompletedProcess[str]:
        """The CLI on this store (or the per-user default one, which list and check bring up to
        date) and these homes; the homes are checked unchanged afterwards."""
        before = self.digests()
        store = [] if default_store else ["--store", str(self.store)]
        base = {k: v for k, v in os.environ.items() if k != "SESSIONKEEPER_HOME"}
        done = subprocess.run(
            [sys.executable, "-m", "sessionkeeper", *args, *store,
             "--codex-home", str(self.codex), "--claude-home", str(self.claude)],
            capture_output=True, text=True, timeout=120,
            env={**base, "NO_COLOR": "1", "XDG_DATA_HOME": str(self.data_home), **(env or {})})
        assert self.digests() == before, f"{args} changed an agent's home"
        return done

    def json(self, *args: str, default_store: bool = False) -> Any:
        """The JSON a command prints (it must succeed)."""
        done = self.run(*args, "--json", default_store=default_store)
        assert done.returncode in (0, 10, 11), done.stderr
        return orjson.loads(done.stdout)


@pytest.fixture
def homes(tmp_path: Path) -> Iterator[Homes]:
    """`repo` (a real repository on fix/payment) and both agents' sessions recorded in it."""
    repo = init_repo(tmp_path / "work" / "repo-a", {"payment.py": "def charge(a):\n    return a\n"})
    git(repo, "checkout", "-q", "-b", "fix/payment")
    yield Homes(tmp_path / "store", repo, codex_home(repo, tmp_path / "codexhome"),
                claude_home(repo, tmp_path / "claudecfg"), tmp_path / "xdg")


def test_list_shows_both_agents_sessions_with_agent_cwd_and_branch(homes: Homes) -> None:
    """Fixture: `homes`; `list` as a table and as JSON, then filtered by agent."""
    table = homes.run("list")
    assert table.returncode == 0, table.stderr
    header, _, *lines = table.stdout.splitlines()
    assert header.split()[:5] == ["thread", "agent", "title", "cwd", "branch"]
    by_thread = {line.split()[0]: line for line in lines}
    assert set(by_thread) == {CODEX, CLAUDE}
    for thread, agent in ((CODEX, "codex"), (CLAUDE, "claude")):
        assert by_thread[thread].split()[1] == agent and "fix/payment" in by_thread[thread]
        assert "repo-a" in by_thread[thread]
    rows = homes.json("list")
    assert {(r["thread_id"], r["agent"], r["cwd"], r["branch"]) for r in rows} == {
        (CODEX, "codex", str(homes.repo), "fix/payment"),
        (CLAUDE, "claude", str(homes.repo), "fix/payment")}
    only = homes.json("list", "--agent", "claude")
    assert [r["thread_id"] for r in only] == [CLAUDE]
    assert homes.json("list", "--agents", "none") == []
    assert [r["agent"] for r in homes.json("list", "--agents", "codex")] == ["codex"]


def test_the_check_is_ok_in_place_and_drift_with_the_branch_after_a_checkout(homes: Homes) -> None:
    """Fixture: `homes`; each session checked in its repository, then after `git checkout -b`."""
    for thread in (CODEX, CLAUDE):
        done = homes.run("--check-resume", thread, "--workspace", str(homes.repo))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "verdict  OK" in done.stdout and "where the facts come from" in done.stdout
    git(homes.repo, "checkout", "-q", "-b", "hotfix")
    for thread, agent in ((CODEX, "codex"), (CLAUDE, "claude")):
        report = homes.json("--check-resume", thread, "--workspace", str(homes.repo))
        assert isinstance(report, dict)
        assert (report["verdict"], report["agent"]) == ("drift", agent)
        assert [(d["kind"], d["recorded"], d["current"]) for d in report["differences"]] == [
            ("branch", "fix/payment", "hotfix")]
        assert report["facts"]["git"]["exact"] is False


def test_a_moved_repository_is_found_again_and_offered_as_relocation(homes: Homes) -> None:
    """Fixture: `homes`, listed once with the per-user store (its index remembers the repository
    at each session's cwd), then the repository renamed: checking at the old path finds it again
    by its root commit."""
    assert homes.run("list", default_store=True).returncode == 0
    moved = homes.repo.with_name("repo-renamed")
    os.rename(homes.repo, moved)
    for thread in (CODEX, CLAUDE):
        report = homes.json("--check-resume", thread, "--workspace", str(homes.repo),
                            default_store=True)
        assert isinstance(report, dict)
        assert report["verdict"] == "blocked" and report["relocate_to"] == str(moved)
        assert "relocate" in report["choices"]
        assert report["facts"]["identity"]["origin"] == "index"
        resumed = homes.json("resume", thread, "--workspace", str(homes.repo),
                             "--decision", "relocate", default_store=True)
        assert isinstance(resumed, dict) and resumed["command"]["cwd"] == str(moved)


def test_resume_prints_the_agents_own_command_only_when_it_may_continue(homes: Homes) -> None:
    """Fixture: `homes`; resume in place (ok), after a checkout (drift), in another repository."""
    ok = homes.run("resume", CODEX, "--workspace", str(homes.repo))
    assert ok.returncode == 0, ok.stderr
    assert f"codex resume {CODEX}" in ok.stdout
    claude = homes.json("resume", CLAUDE, "--workspace", str(homes.repo))
    assert isinstance(claude, dict)
    assert claude["command"] == {"argv": ["claude", "--resume", CLAUDE], "cwd": str(homes.repo),
                                 "display": f"claude --resume {CLAUDE}"}
    git(homes.repo, "checkout", "-q", "-b", "hotfix")
    drift = homes.run("resume", CODEX, "--workspace", str(homes.repo), "--json")
    assert drift.returncode == 10 and orjson.loads(drift.stdout)["command"] is None
    cont = homes.json("resume", CODEX, "--workspace", str(homes.repo), "--decision", "continue")
    assert isinstance(cont, dict) and cont["command"]["argv"] == ["codex", "resume", CODEX]
    assert cont["report"]["decision"] == "continue"
    fork = homes.json("resume", CLAUDE, "--workspace", str(homes.repo), "--decision", "fork")
    assert isinstance(fork, dict)
    assert fork["command"]["argv"] == ["claude", "--resume", CLAUDE, "--fork-session"]
    cancel = homes.run("resume", CODEX, "--workspace", str(homes.repo), "--decision", "cancel",
                       "--json")
    assert cancel.returncode == 0 and orjson.loads(cancel.stdout)["command"] is None
    other = init_repo(homes.repo.parent / "other", {"x": "1\n"})
    blocked = homes.run("resume", CODEX, "--workspace", str(other), "--decision", "continue",
                        "--json")
    assert blocked.returncode == 11 and orjson.loads(blocked.stdout)["command"] is None
    forked = homes.json("resume", CODEX, "--workspace", str(other), "--decision", "fork")
    assert isinstance(forked, dict)
    assert forked["command"] == {"argv": ["codex", "fork", CODEX], "cwd": str(other),
                                 "display": f"codex fork {CODEX}"}


def test_resume_exec_runs_the_agent_in_the_checked_workspace(homes: Homes, tmp_path: Path) -> None:
    """Fixture: `homes`; a `codex` on PATH that records where and how it was run."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "seen.txt"
    fake = bin_dir / "codex"
    fake.write_text(f"#!/bin/sh\npwd > {seen}\necho \"$@\" >> {seen}\nexit 7\n")
    fake.chmod(0o755)
    path = f"{bin_dir}:{os.environ['PATH']}"
    done = homes.run("resume", CODEX, "--workspace", str(homes.repo), "--exec", env={"PATH": path})
    assert done.returncode == 7  # the agent's own exit code: this process became the agent
    assert seen.read_text().splitlines() == [str(homes.repo), f"resume {CODEX}"]
    missing = homes.run("resume", CODEX, "--workspace", str(homes.repo), "--exec",
                        env={"PATH": "/usr/bin:/bin"})  # git, and no codex
    assert missing.returncode == 127 and "cannot run" in missing.stderr


def test_show_lists_the_agent_files_and_the_restored_state(homes: Homes) -> None:
    """Fixture: `homes`; `show` of each agent's thread, as text and JSON."""
    text = homes.run("show", CLAUDE)
    assert text.returncode == 0, text.stderr
    assert "1 session(s)" in text.stdout and "verdict  OK" in text.stdout
    shown = homes.json("show", CODEX)
    assert isinstance(shown, dict)
    [session] = shown["sessions"]
    assert session["imported"] is True and session["path"].endswith(f"{CODEX}.jsonl")
    assert shown["state"]["agent"] == "codex"


def test_a_transcript_cut_inside_a_tool_call_reports_it_in_doubt(homes: Homes) -> None:
    """Fixture: `homes`; the Claude transcript cut right after its Bash tool_use line."""
    [path] = list(homes.claude.glob("projects/*/*.jsonl"))
    data = path.read_bytes()
    path.write_bytes(data[:data.index(b"\n", data.index(b"toolu_bash1")) + 1])
    report = homes.json("--check-resume", CLAUDE, "--workspace", str(homes.repo))
    assert isinstance(report, dict)
    assert [o["operation_id"] for o in report["in_doubt_operations"]] == ["toolu_bash1"]


def test_the_index_follows_the_files_appended_rewritten_and_gone(homes: Homes) -> None:
    """Fixture: `homes`; a line appended to the Codex rollout, then the Claude transcript deleted."""
    assert homes.run("list").returncode == 0
    [rollout] = list(homes.codex.glob("sessions/**/*.jsonl"))
    line = GEN.cx(30, "event_msg", {"type": "thread_name_updated", "thread_id": CODEX,
                                    "thread_name": "Renamed later"})
    with open(rollout, "ab") as handle:
        handle.write(GEN.dump([line]))
    titles = {r["thread_id"]: r["title"] for r in homes.json("list")}
    assert titles[CODEX] == "Renamed later"
    for transcript in homes.claude.glob("projects/*/*.jsonl"):
        transcript.unlink()
    assert [r["thread_id"] for r in homes.json("list")] == [CODEX]
    gone = homes.run("--check-resume", CLAUDE, "--workspace", str(homes.repo))
    assert gone.returncode == 66


def test_secrets_in_an_agents_log_never_reach_the_index(homes: Homes) -> None:
    """Fixture: `homes`; the Claude session's first prompt holds a GitHub token; the per-user
    store (which a listing writes) is searched byte for byte afterwards."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    [path] = list(homes.claude.glob("projects/*/*.jsonl"))
    path.write_bytes(path.read_bytes().replace(b"Fix the rounding bug in payment.py",
                                               f"use {token} to push".encode()))
    rows = homes.json("list", default_store=True)
    assert token not in orjson.dumps(rows).decode()
    report = homes.json("--check-resume", CLAUDE, "--workspace", str(homes.repo),
                        default_store=True)
    assert token not in orjson.dumps(report).decode()
    store = homes.data_home / "sessionkeeper"
    db = sqlite3.connect(store / "state.db")
    dumped = "\n".join(db.iterdump())
    db.close()
    assert "[REDACTED:github_token:" in dumped and token not in dumped
    on_disk = b"".join(p.read_bytes() for p in store.rglob("*") if p.is_file())
    assert token.encode() not in on_disk


def test_a_large_first_import_shows_a_progress_bar_on_a_terminal_only(homes: Homes,
                                                                     tmp_path: Path) -> None:
    """Fixture: `homes` plus 60 more Codex threads; `list` with stderr on a pty, then on a pipe."""
    for n in range(60):
        codex_home(homes.repo, homes.codex, thread=f"019a7c00-1111-7222-8333-{n:012d}")
    piped = homes.run("list", "--json")
    assert piped.returncode == 0 and "importing" not in piped.stderr
    shutil.rmtree(homes.store, ignore_errors=True)  # read-only: nothing was kept anyway
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a real size
    before = homes.digests()
    proc = subprocess.Popen([sys.executable, "-m", "sessionkeeper", "list", "--json", "--limit",
                             "100", "--store", str(homes.store), "--codex-home", str(homes.codex),
                             "--claude-home", str(homes.claude)],
                            stdout=subprocess.PIPE, stderr=child, env={**os.environ})
    os.close(child)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    out, _ = proc.communicate(timeout=120)
    os.close(main)
    assert proc.returncode == 0
    assert b"importing agent sessions" in shown and b"/62 " in shown  # 61 codex, 1 claude
    assert len(orjson.loads(out)) == 62  # every session a thread
    assert homes.digests() == before
