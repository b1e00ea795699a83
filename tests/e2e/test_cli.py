"""The `sessionkeeper` CLI run as a real process: commands, JSON output and exit codes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ..conftest import git


def run(store: Path, *args: str, stdin: str = "", env: dict | None = None):
    """Run the CLI against `store`; returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "sessionkeeper", *args, "--store", str(store)],
                          input=stdin, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})})


@pytest.fixture
def thread(store_dir, repo):
    """A thread started with the CLI and given events through `record` on stdin."""
    started = run(store_dir, "start", "--workspace", str(repo), "--title", "cli story", "--json")
    assert started.returncode == 0, started.stderr
    ids = orjson.loads(started.stdout)
    events = [{"type": "message", "role": "user", "text": "fix it"},
              {"type": "todo", "items": [{"id": "1", "text": "a", "status": "done"},
                                         {"id": "2", "text": "b"}]},
              {"type": "verifier", "kind": "tests", "passed": 7, "total": 9}]
    stdin = "\n".join(orjson.dumps(e).decode() for e in events) + "\n"
    recorded = run(store_dir, "record", "--session", ids["session_id"], stdin=stdin)
    assert recorded.returncode == 0, recorded.stderr
    acks = [orjson.loads(line) for line in recorded.stdout.splitlines()]
    assert [a["seq"] for a in acks] == [3, 4, 5]
    return ids["thread_id"]


def test_check_resume_exit_codes_follow_the_verdict(store_dir, repo, thread):
    """Fixture: thread (CLI-recorded, branch fix/payment)."""
    ok = run(store_dir, "--check-resume", thread, "--workspace", str(repo))
    assert ok.returncode == 0 and "verdict  OK" in ok.stdout
    git(repo, "checkout", "-q", "main")
    drift = run(store_dir, "--check-resume", thread, "--workspace", str(repo), "--json")
    assert drift.returncode == 10
    assert orjson.loads(drift.stdout)["differences"][0]["kind"] == "branch"
    assert run(store_dir, "--check-resume", thread, "--workspace", str(repo),
               "--allow-drift").returncode == 0
    blocked = run(store_dir, "--check-resume", "--latest", "--workspace", str(repo / "gone"))
    assert blocked.returncode == 66  # no thread was recorded for that directory


def test_check_resume_blocked_when_the_workspace_is_gone(store_dir, repo, thread, tmp_path):
    """Fixture: thread; then the repository moved away and a plain directory put in its place."""
    os.rename(repo, tmp_path / "elsewhere")
    repo.mkdir()
    done = run(store_dir, "--check-resume", thread, "--workspace", str(repo), "--json")
    assert done.returncode == 11
    assert orjson.loads(done.stdout)["verdict"] == "blocked"


def test_github_actions_get_an_annotation(store_dir, repo, thread):
    """Fixture: thread, branch switched, GITHUB_ACTIONS set."""
    git(repo, "checkout", "-q", "main")
    done = run(store_dir, "--check-resume", thread, "--workspace", str(repo),
               env={"GITHUB_ACTIONS": "true"})
    assert "::warning title=Session Keeper resume drift::" in done.stderr
    quiet = run(store_dir, "--check-resume", thread, "--workspace", str(repo),
                env={"GITHUB_ACTIONS": "false"})
    assert "::" not in quiet.stderr
    unknown = run(store_dir, "--check-resume", "00000000-0000-4000-8000-000000000000",
                  "--workspace", str(repo), env={"GITHUB_ACTIONS": "true"})
    assert unknown.returncode == 66
    assert "::error title=Session Keeper resume check failed (unknown_thread)::" in unknown.stderr


def test_check_resume_changes_nothing_on_disk(store_dir, repo, thread):
    """Fixture: thread; every file of the store compared before and after."""
    before = {p: p.read_bytes() for p in store_dir.rglob("*.jsonl")}
    run(store_dir, "--check-resume", thread, "--workspace", str(repo))
    assert {p: p.read_bytes() for p in store_dir.rglob("*.jsonl")} == before


def test_list_show_fork_archive_fsck_reindex(store_dir, repo, thread):
    """Fixture: thread."""
    listed = orjson.loads(run(store_dir, "list", "--json").stdout)
    assert [(t["thread_id"], t["title"]) for t in listed] == [(thread, "cli story")]
    assert "cli story" in run(store_dir, "list").stdout
    shown = run(store_dir, "show", thread)
    assert shown.returncode == 0 and re.search(r"todos +1/2 done", shown.stdout)
    forked = orjson.loads(run(store_dir, "fork", thread, "--at", "3", "--json").stdout)
    assert forked["thread_id"] != thread
    assert run(store_dir, "archive", thread).returncode == 0
    assert len(orjson.loads(run(store_dir, "list", "--json").stdout)) == 1
    assert len(orjson.loads(run(store_dir, "list", "--all", "--json").stdout)) == 2
    assert [t["thread_id"] for t in orjson.loads(run(store_dir, "list", "--archived",
                                                     "--json").stdout)] == [thread]
    assert run(store_dir, "unarchive", thread).returncode == 0
    fsck = orjson.loads(run(store_dir, "fsck", "--json").stdout)
    assert fsck["clean"] is True and fsck["checked"] == 2
    (store_dir / "state.db").unlink()
    counts = orjson.loads(run(store_dir, "reindex", "--json").stdout)
    assert counts == {"sessions": 2, "threads": 2, "unindexable": 0}


def test_bad_input_gets_a_typed_error_and_its_exit_code(store_dir, repo, thread):
    """Fixture: thread."""
    bad_id = run(store_dir, "show", "../../etc/passwd")
    assert bad_id.returncode == 64 and "invalid_id" in bad_id.stderr
    unknown = run(store_dir, "show", "00000000-0000-4000-8000-000000000000")
    assert unknown.returncode == 66 and "unknown_thread" in unknown.stderr
    sessions = list(store_dir.rglob("rollout-*.jsonl"))
    before = {p: p.read_bytes() for p in sessions}
    session_id = sessions[0].name[-42:-6]
    bad_event = run(store_dir, "record", "--session", session_id, stdin='{"type":"nope"}\nnot json\n')
    assert bad_event.returncode == 65
    assert [orjson.loads(x)["error"] for x in bad_event.stdout.splitlines()] == [
        "invalid_event", "invalid_event"]
    after = sessions[0].read_bytes()
    assert after.startswith(before[sessions[0]])  # nothing lost; only a closing snapshot added


def test_schema_is_the_json_schema_of_a_rollout_line(store_dir):
    """Fixture: an empty store."""
    schema = orjson.loads(run(store_dir, "schema").stdout)
    kinds = set(schema["discriminator"]["mapping"])
    assert {"session_meta", "lifecycle", "message", "operation", "todo", "verifier",
            "file_change", "cost", "permissions", "model", "compacted", "snapshot"} <= kinds


def test_store_option_works_before_and_after_the_subcommand(tmp_path, repo):
    """Fixture: two empty stores; --store given before, then after, `start`."""
    before, after = tmp_path / "before", tmp_path / "after"
    env = {**os.environ, "SESSIONKEEPER_HOME": str(tmp_path / "default")}
    for args in (["--store", str(before), "start", "--workspace", str(repo)],
                 ["start", "--workspace", str(repo), "--store", str(after), "--json"]):
        done = subprocess.run([sys.executable, "-m", "sessionkeeper", *args], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    assert list(before.rglob("rollout-*.jsonl")) and list(after.rglob("rollout-*.jsonl"))
    assert not (tmp_path / "default").exists()


def test_fork_outside_the_threads_records_is_a_typed_error(store_dir, thread):
    """Fixture: thread (seq 0..6 after its closing snapshot)."""
    for at in ("-1", "999"):
        done = run(store_dir, "fork", thread, "--at", at)
        assert done.returncode == 65 and "outside the thread's records" in done.stderr


def test_recording_into_a_session_damaged_in_the_middle_is_refused(store_dir, thread):
    """Fixture: thread; one byte of its first message changed (still valid JSON)."""
    path = next(store_dir.rglob("rollout-*.jsonl"))
    path.write_bytes(path.read_bytes().replace(b'"fix it"', b'"fix IT"'))
    done = run(store_dir, "record", "--session", path.name[-42:-6],
               stdin='{"type":"message","role":"user","text":"more"}\n')
    assert done.returncode == 74 and "fork the thread to continue" in done.stderr
    assert b'"more"' not in path.read_bytes()


def test_check_resume_without_a_thread_is_a_usage_error(store_dir, repo):
    """Fixture: an empty store."""
    done = run(store_dir, "--check-resume", "--workspace", str(repo))
    assert done.returncode == 2 and "needs a THREAD or --latest" in done.stderr


def test_serve_after_global_options_really_serves(store_dir):
    """Fixture: an empty store; `sessionkeeper --store DIR serve` answers an LSP initialize."""
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"capabilities": {}, "processId": None, "rootUri": None}})
    message = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "--store", str(store_dir),
                           "serve"], input=message, capture_output=True, timeout=60)
    assert b'"id":1' in done.stdout.replace(b" ", b"") and b"capabilities" in done.stdout


def test_ordinary_mistakes_get_one_line_and_an_exit_code_never_a_traceback(store_dir, repo,
                                                                           tmp_path, thread):
    """Fixture: thread; a store under a file, a store under a missing /proc path, demo twice,
    deeply nested JSON and a bad operation id in a record stream, a reader that leaves."""
    for bad_store in ("/etc/passwd/x", "/proc/nope/x"):
        done = subprocess.run([sys.executable, "-m", "sessionkeeper", "start", "--workspace",
                               str(repo), "--store", bad_store], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 74 and "Traceback" not in done.stderr
        assert "cannot use" in done.stderr
    demo = tmp_path / "demo"
    first = run(store_dir, "demo", "--dir", str(demo), "--json")
    assert first.returncode == 0, first.stderr
    again = run(store_dir, "demo", "--dir", str(demo))
    assert again.returncode == 64 and "already holds a demo" in again.stderr
    assert "Traceback" not in again.stderr
    session = orjson.loads(run(store_dir, "show", thread, "--json").stdout)["sessions"][0]
    nested = "[" * 300 + "]" * 300
    stream = "\n".join([
        '{"type": "message", "role": "user", "text": "before"}',
        '{"type": "message", "role": "user", "text": "x", "data": {"deep": ' + nested + "}}",
        '{"type": "operation", "operation_id": "../../bad", "tool": "t", "status": "started"}',
        '{"type": "message", "role": "user", "text": "after"}']) + "\n"
    recorded = run(store_dir, "record", "--session", session["session_id"], stdin=stream)
    lines = [orjson.loads(line) for line in recorded.stdout.splitlines()]
    assert [("seq" in line, line.get("error")) for line in lines] == [
        (True, None), (False, "invalid_event"), (False, "invalid_id"), (True, None)]
    assert recorded.returncode == 65 and recorded.stderr.count("sessionkeeper: line") == 2
    git(repo, "checkout", "-q", "main")  # drift: the exit code must still say 10 when the
    piped = subprocess.run(f"set -o pipefail; {sys.executable} -m sessionkeeper "  # reader left
                           f"--store {store_dir} --check-resume {thread} --workspace {repo} "
                           "| true", shell=True, capture_output=True, text=True, timeout=60,
                           executable="/bin/bash")
    assert piped.returncode == 10, piped.stderr
    assert "Traceback" not in piped.stderr and "BrokenPipe" not in piped.stderr


def test_integers_beyond_64_bits_are_refused_never_rounded(store_dir, thread):
    """Fixture: thread; a record with 2**64 in it, and one with 2**63 - 1."""
    session = orjson.loads(run(store_dir, "show", thread, "--json").stdout)["sessions"][0]
    stream = ('{"type": "cost", "model": "m", "input_tokens": 18446744073709551616}\n'
              '{"type": "cost", "model": "m", "input_tokens": 9223372036854775807}\n')
    recorded = run(store_dir, "record", "--session", session["session_id"], stdin=stream)
    first, second = (orjson.loads(line) for line in recorded.stdout.splitlines())
    assert first["error"] == "invalid_event" and "64-bit" in first["message"]
    assert "seq" in second
    rollout = next(store_dir.rglob("rollout-*.jsonl")).read_bytes()
    assert b"9223372036854775807" in rollout and b"1.8446744073709552e+19" not in rollout


@pytest.mark.parametrize("bad", [
    '{"type": "message", "role": "user", "text": "x", "n": ' + "[" * 100_000
    + "12345678901234567890" + "]" * 100_000 + "}",
    '{"type": "operation", "operation_id": "op-n", "tool": "t", "status": "started", '
    '"args": {"x": NaN, "ref": "build 12345678901234567890123"}}',
], ids=["nested-100k-deep", "nan"])
def test_a_line_orjson_would_refuse_is_refused_on_the_exact_integer_path_too(store_dir, thread,
                                                                              bad):
    """Fixture: thread; a line with a 19-digit number (decoded by json for exact integers) that
    is nested 100,000 deep, or holds NaN (not JSON): that line is refused, the next recorded."""
    session = orjson.loads(run(store_dir, "show", thread, "--json").stdout)["sessions"][0]
    stream = bad + '\n{"type": "message", "role": "user", "text": "next"}\n'
    recorded = run(store_dir, "record", "--session", session["session_id"], stdin=stream)
    assert recorded.returncode == 65 and "Traceback" not in recorded.stderr, recorded.stderr
    first, second = (orjson.loads(line) for line in recorded.stdout.splitlines())
    assert first["error"] == "invalid_event" and "seq" in second
    assert b'"op-n"' not in next(store_dir.rglob("rollout-*.jsonl")).read_bytes()



def _touched(store_dir: Path, repo: Path) -> str:
    """A session in `repo` that wrote payment.py and test_payment.py, then ran the tests."""
    from sessionkeeper.api import Keeper

    with Keeper(store_dir).start(repo) as session:
        for name in ("payment.py", "test_payment.py"):
            (repo / name).write_text("changed by the agent\n")
            session.record({"type": "file_change", "path": name})
        session.record({"type": "verifier", "kind": "tests", "passed": 2, "total": 2})
    return session.thread_id


def test_a_touched_file_that_became_a_named_pipe_is_drift_and_the_check_never_hangs(store_dir,
                                                                                      repo):
    """Fixture: `_touched`; then payment.py replaced by a named pipe nobody writes to."""
    thread = _touched(store_dir, repo)
    (repo / "payment.py").unlink()
    os.mkfifo(repo / "payment.py")
    done = run(store_dir, "--check-resume", thread, "--workspace", str(repo), "--json")
    assert done.returncode == 10, done.stderr
    report = orjson.loads(done.stdout)
    assert [(d["kind"], d["recorded"]["path"]) for d in report["differences"]] == [
        ("file_missing", "payment.py")]
    assert report["rerun_verifier"] is True


def test_one_unreadable_touched_file_hides_no_other_difference(store_dir, repo):
    """Fixture: `_touched`; then payment.py became a directory and test_payment.py a symlink to
    itself (reading it fails with ELOOP): both are reported, the verdict is drift (exit 10)."""
    thread = _touched(store_dir, repo)
    (repo / "payment.py").unlink()
    (repo / "payment.py").mkdir()
    (repo / "test_payment.py").unlink()
    (repo / "test_payment.py").symlink_to("test_payment.py")
    done = run(store_dir, "--check-resume", thread, "--workspace", str(repo), "--json")
    assert done.returncode == 10, done.stderr
    report = orjson.loads(done.stdout)
    assert [(d["kind"], d["recorded"]["path"]) for d in report["differences"]] == [
        ("file_missing", "payment.py"), ("file_missing", "test_payment.py")]
    assert "cannot be read" in report["differences"][1]["detail"]
    assert report["rerun_verifier"] is True


def copy_fixture_in(store_dir, scenario: str) -> None:
    """Copy fixtures/rollouts/<scenario>'s rollout into the store's sessions/2026/11/28/."""
    from ..conftest import FIXTURES

    source = next((FIXTURES / "rollouts" / scenario).glob("rollout-*.jsonl"))
    day = store_dir / "sessions" / "2026" / "11" / "28"
    day.mkdir(parents=True)
    (day / source.name).write_bytes(source.read_bytes())


def test_fsck_repair_exits_1_while_damage_it_cannot_repair_is_left(store_dir, thread):
    """Fixtures: thread; rollouts/middle_damage copied into the store after its index was built
    (a row missing, which the repair's rebuild adds; line 3 damaged, which nothing repairs)."""
    copy_fixture_in(store_dir, "middle_damage")
    assert run(store_dir, "fsck").returncode == 1
    repaired = run(store_dir, "fsck", "--repair", "--json")
    report = orjson.loads(repaired.stdout)
    assert report["repaired"] is True and [d["lines"] for d in report["damaged"]] == [[3]]
    assert repaired.returncode == 1
    assert run(store_dir, "fsck").returncode == 1


def test_fsck_repair_exits_0_when_it_repaired_everything_it_found(store_dir, thread):
    """Fixtures: thread; rollouts/torn_tail copied into the store after its index was built
    (a row missing and a torn tail: the rebuild adds the row, the tail goes to quarantine)."""
    copy_fixture_in(store_dir, "torn_tail")
    assert run(store_dir, "fsck").returncode == 1
    repaired = run(store_dir, "fsck", "--repair", "--json")
    assert repaired.returncode == 0, repaired.stdout
    assert len(orjson.loads(repaired.stdout)["quarantined"]) == 1
    assert run(store_dir, "fsck").returncode == 0
