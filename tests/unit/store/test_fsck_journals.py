"""fsck of the agents' journal stores (`Upkeep.fsck` → `report.journals`): their rollouts checked
as the store's own are, and the spool files a fold kept for damaged or torn lines reported; a
repair sets aside what was never acknowledged (torn lines, a torn tail) and leaves a damaged
call, and the blocked resume it causes, as they are. Real hook calls, a real repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sessionkeeper.api import Keeper
from sessionkeeper.store import spool
from tests.unit._hooks import SID, call, payload, run

AGENT = "claude"


def _root(store: Path) -> str:
    return str(store / "journals" / AGENT)


def _session(repo: Path, store: Path) -> None:
    """A Claude session through its hooks: SessionStart (in-process), one Bash call (spooled)."""
    call(AGENT, "SessionStart", repo, store, source="startup")
    _bash(repo, store, "toolu_1")


def _bash(repo: Path, store: Path, call_id: str) -> None:
    """A PreToolUse hook as Claude Code runs it (its own process: the thin hook spools it)."""
    data = payload(AGENT, "PreToolUse", repo, tool_name="Bash", tool_use_id=call_id,
                   tool_input={"command": "true"})
    done = run(AGENT, "PreToolUse", json.dumps(data), store)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def _fold(store: Path, repo: Path) -> None:
    """A fold of the session's spool into its journal (what the next read for writing does)."""
    with Keeper(store) as keeper:
        keeper.journal(AGENT, SID, workspace=str(repo)).close()


def _kept(store: Path) -> list[Path]:
    return sorted(Path(spool.spool_dir(_root(store))).glob(f"*{spool.DAMAGED}"))


def _verdict(store: Path, repo: Path) -> str:
    with Keeper(store, read_only=True) as keeper:
        return str(keeper.journal_keeper(AGENT).check_resume(SID, workspace=str(repo)).verdict)


def _fsck(store: Path, *, repair: bool = False):  # noqa: ANN202 - the report (FsckReport)
    with Keeper(store, read_only=not repair) as keeper:
        return keeper.fsck(repair=repair)


def test_a_spool_kept_for_torn_lines_is_reported_then_set_aside_by_a_repair(
        repo: Path, store_dir: Path) -> None:
    """Fixture: a session whose spool holds half a line a killed hook left, then another call;
    folded (the spool file kept as `.damaged`): fsck reports it under the journal store, a repair
    moves it byte for byte into quarantine/, the next fsck is clean, the resume is as before."""
    _session(repo, store_dir)
    with open(spool.spool_path(_root(store_dir), SID), "ab") as handle:
        handle.write(spool.frame(b'{"call":"never acknowledged"}')[:9])
    _bash(repo, store_dir, "toolu_2")
    _fold(store_dir, repo)
    [kept] = _kept(store_dir)
    data, verdict = kept.read_bytes(), _verdict(store_dir, repo)
    found = _fsck(store_dir)
    [entry] = found.journals[AGENT].spools
    assert (entry["session_id"], entry["damaged"], len(entry["torn"])) == (SID, [], 1)
    assert not found.clean and found.problems_left and found.journals[AGENT].checked == 1
    repaired = _fsck(store_dir, repair=True)
    assert repaired.journals[AGENT].spools[0]["quarantined"] is True and not repaired.problems_left
    [moved] = repaired.journals[AGENT].quarantined
    assert _kept(store_dir) == [] and Path(moved.path).read_bytes() == data
    assert Path(moved.path).parent == store_dir / "journals" / AGENT / "quarantine"
    assert _fsck(store_dir).clean
    assert _verdict(store_dir, repo) == verdict


def test_a_damaged_spooled_call_is_reported_and_no_repair_removes_it_or_its_block(
        repo: Path, store_dir: Path) -> None:
    """Fixture: a session whose acknowledged spooled call has one byte flipped on disk, folded:
    the resume is blocked; fsck (and the CLI) report the damaged line in the journal store and
    exit 1; a repair leaves the file as it is, and the resume blocked."""
    _session(repo, store_dir)
    path = Path(spool.spool_path(_root(store_dir), SID))
    data = bytearray(path.read_bytes())
    data[data.index(b'"toolu_1"') + 3] ^= 0x01
    path.write_bytes(bytes(data))
    _fold(store_dir, repo)
    [kept] = _kept(store_dir)
    before = kept.read_bytes()
    assert _verdict(store_dir, repo) == "blocked"
    found = _fsck(store_dir, repair=True)
    [entry] = found.journals[AGENT].spools
    assert len(entry["damaged"]) == 1 and "quarantined" not in entry and found.problems_left
    assert _kept(store_dir) == [kept] and kept.read_bytes() == before
    assert _verdict(store_dir, repo) == "blocked"
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "fsck", "--store",
                           str(store_dir)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 1, done.stderr
    assert f"journals of {AGENT}: checked 1 rollout(s): problems found" in done.stdout
    assert "  spools: 1" in done.stdout
    listed = subprocess.run([sys.executable, "-m", "sessionkeeper", "fsck", "--json", "--store",
                             str(store_dir)], capture_output=True, text=True, timeout=60)
    report = json.loads(listed.stdout)
    assert report["clean"] is False and report["journals"][AGENT]["clean"] is False
    assert report["journals"][AGENT]["spools"][0]["damaged"][0]["offset"] == entry["damaged"][0]["offset"]


def test_a_torn_tail_of_a_journal_rollout_is_found_and_quarantined_as_in_the_store(
        repo: Path, store_dir: Path) -> None:
    """Fixture: a folded session whose journal rollout then gets half a line appended (no writer
    open): fsck reports it under the journal store alone; a repair cuts it off into quarantine/."""
    _session(repo, store_dir)
    _fold(store_dir, repo)
    [rollout] = (store_dir / "journals" / AGENT / "sessions").rglob("*.jsonl")
    size = rollout.stat().st_size
    with open(rollout, "ab") as handle:
        handle.write(b'{"seq": 99, "type": "mess')
    found = _fsck(store_dir)
    assert found.damaged == [] and [d["tail_bytes"] for d in found.journals[AGENT].damaged] == [25]
    repaired = _fsck(store_dir, repair=True)
    assert repaired.journals[AGENT].damaged[0]["quarantined"] is True and not repaired.problems_left
    assert rollout.stat().st_size == size and _fsck(store_dir).clean


def test_a_store_without_journals_reports_none_and_creates_none(store_dir: Path,
                                                                repo: Path) -> None:
    """Fixture: a store with one native thread and no hook ever run: no journal store is
    reported or made by fsck, with or without repair."""
    with Keeper(store_dir) as keeper:
        keeper.start(repo).close()
    assert _fsck(store_dir).journals == {} and _fsck(store_dir, repair=True).clean
    assert not (store_dir / "journals").exists()
