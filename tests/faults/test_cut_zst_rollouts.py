"""Codex rollouts stored as `.jsonl.zst` and cut short (a copy interrupted, a disk that filled
while compressing): the reader, the listing, the check and the CLI on real zstd files.

zstandard's stream reader just stops where the bytes stop, so a frame cut in its middle read as
an empty or a shorter rollout. A file cut inside a frame is unreadable (AgentLogUnreadable, exit
74), alone: the other files are read. A file cut exactly between two frames holds only whole
frames and cannot be told from a shorter whole file: it reads as that file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from sessionkeeper import agents
from sessionkeeper.agents.importer import AgentSources
from sessionkeeper.agents.reads import Read
from sessionkeeper.api import Keeper
from sessionkeeper.errors import AgentLogUnreadable
from tests.unit._agents import AGENT_FIXTURES, codex_home, generator, only_session, tree_digest

GEN = generator()
INTACT = (AGENT_FIXTURES / "codex/intact" / GEN.CODEX_DAY / GEN.CODEX_NAME).read_bytes()
LINES = INTACT.splitlines(keepends=True)
HALF = b"".join(LINES[:len(LINES) // 2])  # the first frame of a two-frame file
OTHER = "019a7c00-2222-7222-8333-444455556666"
CUT = "truncated zstd stream"


def _frames(*parts: bytes, checksum: bool = False) -> bytes:
    """One zstd frame per part, concatenated (as `cat a.zst b.zst` or a multi-frame writer makes)."""
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=checksum)
    return b"".join(compressor.compress(part) for part in parts)


def _zst_home(home: Path, data: bytes) -> Path:
    """A CODEX_HOME whose one rollout is `data`, stored as the fixture thread's `.jsonl.zst`."""
    path = home / GEN.CODEX_DAY / (GEN.CODEX_NAME + ".zst")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return home


def _read(home: Path) -> Read:
    return agents.get("codex").read(only_session("codex", home))


def _compressed(home: Path) -> Path:
    """Replace the plain rollout under `home` by its `.jsonl.zst` (two frames); return that file."""
    [plain] = list(home.rglob("rollout-*.jsonl"))
    lines = plain.read_bytes().splitlines(keepends=True)
    packed = plain.with_name(plain.name + ".zst")
    packed.write_bytes(_frames(b"".join(lines[:3]), b"".join(lines[3:])))
    plain.unlink()
    return packed


def _cut_inside_second_frame(path: Path) -> None:
    """Rewrite `path` (a two-frame zstd file) cut 5 bytes into its second frame, as a copy that
    stopped there would leave it."""
    data = path.read_bytes()
    second = data.index(zstandard.FRAME_HEADER, 1)
    path.write_bytes(data[:second + 5])


@pytest.mark.parametrize("keep", [4, 6, 0.5, -1], ids=["magic", "header", "half", "last-byte"])
def test_a_zst_rollout_cut_inside_its_frame_is_unreadable_not_empty(tmp_path: Path,
                                                                    keep: float) -> None:
    """Fixture: fixtures/agents/codex/intact compressed by zstandard as one frame, then cut after
    its magic, after its header, in its middle, and one byte short."""
    whole = _frames(INTACT)
    end = int(len(whole) * keep) if isinstance(keep, float) else keep % len(whole)
    home = _zst_home(tmp_path / "codex", whole[:end])
    with pytest.raises(AgentLogUnreadable, match=CUT) as raised:
        _read(home)
    assert GEN.CODEX_NAME in str(raised.value)


def test_a_zst_rollout_missing_its_checksum_bytes_is_unreadable(tmp_path: Path) -> None:
    """Fixture: the intact rollout as one frame with its content checksum, the last 2 bytes
    (half the checksum) cut off: every block is there, the frame is not."""
    home = _zst_home(tmp_path / "codex", _frames(INTACT, checksum=True)[:-2])
    with pytest.raises(AgentLogUnreadable, match=CUT):
        _read(home)


def test_a_zst_rollout_cut_inside_its_second_frame_is_unreadable_not_a_shorter_history(
        tmp_path: Path) -> None:
    """Fixture: the intact rollout as two frames (its first half, the rest), cut 5 bytes into
    the second: its first frame alone is a valid, shorter rollout."""
    home = _zst_home(tmp_path / "codex", _frames(HALF, INTACT[len(HALF):]))
    _cut_inside_second_frame(only_session("codex", home).path)
    with pytest.raises(AgentLogUnreadable, match=CUT):
        _read(home)


def test_a_zero_byte_zst_rollout_is_unreadable_not_an_empty_session(tmp_path: Path) -> None:
    """Fixture: an empty `.jsonl.zst` (no frame: zstd itself says `unexpected end of file`)."""
    home = _zst_home(tmp_path / "codex", b"")
    with pytest.raises(AgentLogUnreadable, match=CUT):
        _read(home)


def test_a_zst_rollout_of_many_frames_reads_whole(tmp_path: Path) -> None:
    """Fixture: the intact rollout as one frame per line (checksummed), with a skippable frame
    after the first: the same records as the plain file."""
    skippable = (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"pad"
    frames = [_frames(line, checksum=True) for line in LINES]
    home = _zst_home(tmp_path / "codex", frames[0] + skippable + b"".join(frames[1:]))
    plain = agents.get("codex").read(only_session("codex", AGENT_FIXTURES / "codex/intact"))
    read = _read(home)
    assert read.records == plain.records and read.lines_parsed == len(LINES)
    assert read.tail is None and read.summary.status == plain.summary.status


def test_a_zst_rollout_cut_between_two_frames_reads_as_the_shorter_whole_file(
        tmp_path: Path) -> None:
    """Fixture: the two-frame rollout cut exactly where its second frame begins. Only whole
    frames remain: nothing tells it from a file that was always this short (documented limit)."""
    two = _frames(HALF, INTACT[len(HALF):])
    home = _zst_home(tmp_path / "codex", two[:two.index(zstandard.FRAME_HEADER, 1)])
    shorter = _zst_home(tmp_path / "short", _frames(HALF))
    assert _read(home).records == _read(shorter).records
    assert _read(home).lines_parsed == len(HALF.splitlines())


def test_a_cut_zst_rollout_is_reported_alone_and_the_other_threads_are_listed(
        store_dir: Path, repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo`, a Codex home whose rollout is a two-frame `.jsonl.zst` cut inside its
    second frame, and a second home with another thread (plain) recorded in `repo`."""
    cut = codex_home(repo, tmp_path / "cut")
    _cut_inside_second_frame(_compressed(cut))
    other = codex_home(repo, tmp_path / "other", thread=OTHER)
    results = [r for _, r in agents.get("codex").scan([cut, other])]
    assert [type(r).__name__ for r in results] == ["AgentLogUnreadable", "Read"]
    assert CUT in str(results[0])
    keeper = Keeper(store_dir, agents=AgentSources(agents=("codex",),
                                                   roots={"codex": (str(cut), str(other))}))
    assert [r.thread_id for r in keeper.rows()] == [OTHER]
    counts = keeper.import_agents(force=True)
    assert counts is not None and (counts.unreadable, counts.unchanged) == (1, 1)


def test_checking_a_thread_whose_zst_rollout_was_cut_after_listing_is_a_typed_error(
        store_dir: Path, repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo` and a Codex home whose rollout is a two-frame `.jsonl.zst`, listed whole,
    then cut inside its second frame (a shorter history must never be checked as the thread)."""
    home = codex_home(repo, tmp_path / "codex")
    packed = _compressed(home)
    keeper = Keeper(store_dir, agents=AgentSources(agents=("codex",), roots={"codex": (str(home),)}))
    assert [r.thread_id for r in keeper.rows()] == [GEN.CODEX_THREAD]
    assert keeper.check_resume(GEN.CODEX_THREAD, workspace=str(repo)).verdict == "ok"
    _cut_inside_second_frame(packed)
    with pytest.raises(AgentLogUnreadable, match=CUT):
        keeper.check_resume(GEN.CODEX_THREAD, workspace=str(repo))


def test_the_cli_check_of_a_cut_zst_rollout_exits_74_naming_the_file(repo: Path,
                                                                      tmp_path: Path) -> None:
    """Fixture: as above, through the real `sessionkeeper` CLI on the per-user store (which
    `list` brings up to date): listed whole, then checked once the `.jsonl.zst` is cut; the Codex
    home is never written by it."""
    home = codex_home(repo, tmp_path / "codex")
    packed = _compressed(home)
    env = {k: v for k, v in os.environ.items() if k != "SESSIONKEEPER_HOME"}
    env |= {"NO_COLOR": "1", "XDG_DATA_HOME": str(tmp_path / "xdg")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        before = tree_digest(home)
        done = subprocess.run(
            [sys.executable, "-m", "sessionkeeper", *args, "--codex-home", str(home),
             "--claude-home", str(tmp_path / "no-claude")],
            capture_output=True, text=True, timeout=120, env=env)
        assert tree_digest(home) == before
        return done

    listed = cli("list")
    assert listed.returncode == 0 and GEN.CODEX_THREAD in listed.stdout, listed.stderr
    _cut_inside_second_frame(packed)
    checked = cli("--check-resume", GEN.CODEX_THREAD, "--workspace", str(repo))
    assert checked.returncode == 74, checked.stdout + checked.stderr
    assert "agent_log_unreadable" in checked.stderr and CUT in checked.stderr
    assert str(packed) in checked.stderr
    assert cli("list").returncode == 0


def test_checking_a_thread_whose_only_rollout_was_cut_before_any_listing_names_the_file(
        store_dir: Path, repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo` and a Codex home whose only rollout is a two-frame `.jsonl.zst` cut inside
    its second frame before any import (the index never knew the thread)."""
    home = codex_home(repo, tmp_path / "codex")
    packed = _compressed(home)
    _cut_inside_second_frame(packed)
    keeper = Keeper(store_dir, agents=AgentSources(agents=("codex",), roots={"codex": (str(home),)}))
    with pytest.raises(AgentLogUnreadable, match=CUT) as raised:
        keeper.check_resume(GEN.CODEX_THREAD, workspace=str(repo))
    assert str(packed) in str(raised.value)
    assert keeper.rows() == []  # it is still no thread of the listing


def test_the_cli_check_on_a_read_only_store_of_a_cut_zst_rollout_exits_74_naming_the_file(
        store_dir: Path, repo: Path, tmp_path: Path) -> None:
    """Fixture: the cut `.jsonl.zst` above, checked by the real CLI with `--store` (read-only:
    each run imports in memory, so the thread was never listed whole)."""
    home = codex_home(repo, tmp_path / "codex")
    packed = _compressed(home)
    _cut_inside_second_frame(packed)
    checked = subprocess.run(
        [sys.executable, "-m", "sessionkeeper", "--check-resume", GEN.CODEX_THREAD,
         "--workspace", str(repo), "--store", str(store_dir), "--codex-home", str(home),
         "--claude-home", str(tmp_path / "no-claude")],
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert checked.returncode == 74, checked.stdout + checked.stderr
    assert "agent_log_unreadable" in checked.stderr and str(packed) in checked.stderr
