"""Incremental, bounded, read-only reading of agent logs (both agents; fixtures/agents/)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import orjson
import pytest
import zstandard

from sessionkeeper import agents
from sessionkeeper.agents.base import AgentFile, AgentLogUnreadable
from sessionkeeper.agents.lines import MAX_LINE
from sessionkeeper.agents.reads import Checkpoint
from tests.unit._agents import AGENT_FIXTURES, copy_root, generator, only_session, tree_digest

GEN = generator()


def _codex_more() -> bytes:
    """Three Codex lines that continue the intact thread: a new turn with a call in flight."""
    return GEN.dump([
        GEN.cx(40, "turn_context", {"cwd": GEN.CWD, "approval_policy": "never",
                                    "sandbox_policy": {"type": "danger-full-access"}, "model": "gpt-5"}),
        GEN.cx(41, "response_item", {"type": "message", "role": "user", "id": "msg_u3",
                                     "content": [{"type": "input_text", "text": "ship it"}]}),
        GEN.cx(42, "response_item", {"type": "function_call", "name": "exec_command", "call_id": "call_ship",
                                     "arguments": '{"cmd": "make ship"}'})])


def _claude_more() -> bytes:
    """The three lines a resume on release/1.2 appended (the tail of the branch_change fixture)."""
    data = only_session("claude", AGENT_FIXTURES / "claude/branch_change").path.read_bytes()
    return b"".join(line + b"\n" for line in data.split(b"\n")[15:-1])


MORE = {"codex": _codex_more, "claude": _claude_more}


def _intact(agent: str, tmp_path: Path) -> AgentFile:
    return only_session(agent, copy_root(agent, "intact", tmp_path))


def _append(file: AgentFile, data: bytes) -> None:
    with open(file.path, "ab") as handle:
        handle.write(data)


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_appended_lines_are_parsed_alone_and_equal_a_full_read(agent: str, tmp_path: Path) -> None:
    """fixtures/agents/<agent>/intact + 3 appended lines: only those 3 are parsed; same result."""
    reader, file = agents.get(agent), _intact(agent, tmp_path)
    first = reader.read(file)
    _append(file, MORE[agent]())
    later = reader.read(file, first.checkpoint)
    assert (later.mode, later.reason, later.lines_parsed) == ("appended", "grown", 3)
    assert later.bytes_read == len(MORE[agent]())
    assert later.records and later.records[0]["seq"] == first.records[-1]["seq"] + 1
    whole = reader.read(file)
    assert whole.records == first.records + later.records
    assert whole.summary == later.summary
    assert whole.meta == later.meta


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_an_unchanged_file_is_not_parsed(agent: str, tmp_path: Path) -> None:
    """fixtures/agents/<agent>/intact read twice: the second read is a stat and nothing more."""
    reader, file = agents.get(agent), _intact(agent, tmp_path)
    first = reader.read(file)
    again = reader.read(file, first.checkpoint)
    assert (again.mode, again.lines_parsed, again.records) == ("unchanged", 0, [])
    assert again.summary == first.summary


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_a_truncated_file_is_read_whole(agent: str, tmp_path: Path) -> None:
    """fixtures/agents/<agent>/intact cut to its first 5 lines after a read."""
    reader, file = agents.get(agent), _intact(agent, tmp_path)
    first = reader.read(file)
    lines = file.path.read_bytes().split(b"\n")
    file.path.write_bytes(b"\n".join(lines[:5]) + b"\n")
    later = reader.read(file, first.checkpoint)
    assert (later.mode, later.reason, later.lines_parsed) == ("full", "truncated", 5)


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_a_replaced_file_is_read_whole(agent: str, tmp_path: Path) -> None:
    """fixtures/agents/<agent>/intact replaced (new inode) by itself plus 3 lines."""
    reader, file = agents.get(agent), _intact(agent, tmp_path)
    first = reader.read(file)
    fresh = file.path.with_suffix(".new")
    fresh.write_bytes(file.path.read_bytes() + MORE[agent]())
    os.replace(fresh, file.path)
    later = reader.read(file, first.checkpoint)
    assert (later.mode, later.reason) == ("full", "replaced")
    assert later.lines_parsed == first.lines_parsed + 3


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_a_file_rewritten_in_place_is_read_whole(agent: str, tmp_path: Path) -> None:
    """fixtures/agents/<agent>/intact with one byte of its first line changed, same size."""
    reader, file = agents.get(agent), _intact(agent, tmp_path)
    first = reader.read(file)
    data = bytearray(file.path.read_bytes())
    at = data.index(b"09:30:00")
    data[at:at + 8] = b"08:30:00"
    with open(file.path, "r+b") as handle:  # same inode, same size
        handle.write(bytes(data))
        handle.flush()
        os.utime(file.path, ns=(first.checkpoint.mtime_ns + 10**9, first.checkpoint.mtime_ns + 10**9))
    later = reader.read(file, first.checkpoint)
    assert (later.mode, later.reason) == ("full", "rewritten")
    assert later.summary.created_at == "2026-11-28T08:30:00.000Z"


def test_a_torn_tail_is_parsed_once_its_line_is_complete(tmp_path: Path) -> None:
    """fixtures/agents/claude/torn_tail: the rest of the torn line arrives; only it is parsed."""
    reader = agents.get("claude")
    file = only_session("claude", copy_root("claude", "torn_tail", tmp_path))
    first = reader.read(file)
    assert first.tail is not None and first.checkpoint.offset == first.tail.offset
    whole_line = GEN.dump([GEN.Transcript().user(20, 30, 11, "and also the tax")])
    _append(file, whole_line[first.tail.length:])
    later = reader.read(file, first.checkpoint)
    assert (later.mode, later.lines_parsed, later.tail) == ("appended", 1, None)
    assert [r["text"] for r in later.records if r["type"] == "message"] == ["and also the tax"]


def test_a_bad_last_line_is_the_tail_until_another_line_makes_it_damage(tmp_path: Path) -> None:
    """fixtures/agents/claude/intact + an unparsable complete line, then a good one after it."""
    reader, file = agents.get("claude"), _intact("claude", tmp_path)
    _append(file, b'{"type":"user","mess\n')
    first = reader.read(file)
    assert first.tail is not None and first.tail.line == 16 and not first.damage
    _append(file, GEN.dump([GEN.Transcript().user(30, 31, 11, "next")]))
    later = reader.read(file, first.checkpoint)
    assert later.mode == "appended" and later.lines_parsed == 2  # the held line, then the new one
    assert [(d.line, d.kind) for d in later.damage] == [(16, "unparsable")]
    assert later.summary.damage == 1 and later.summary.status == "damaged" and later.tail is None


def test_a_50_mb_line_is_damage_and_memory_stays_bounded(tmp_path: Path) -> None:
    """fixtures/agents/claude/intact with a 50 MB line inserted after line 3."""
    reader, file = agents.get("claude"), _intact("claude", tmp_path)
    lines = file.path.read_bytes().split(b"\n")
    huge = b'{"type":"user","message":{"role":"user","content":"' + b"a" * (50 << 20) + b'"}}'
    file.path.write_bytes(b"\n".join(lines[:3] + [huge] + lines[3:]))
    del huge, lines
    tracemalloc.start()
    try:
        result = reader.read(file)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(d.line, d.kind) for d in result.damage] == [(4, "oversize")]
    assert result.summary.lines == 16 and result.summary.messages == 3
    # a line is held only up to the limit (16 MiB) before it is known to be too long
    assert peak < MAX_LINE + (4 << 20), f"peak {peak / 2**20:.1f} MiB while reading a 50 MB line"


def test_json_nested_10000_deep_is_damage_not_a_crash(tmp_path: Path) -> None:
    """fixtures/agents/codex/intact with an array and an object nested 10,000 deep inserted."""
    reader = agents.get("codex")
    file = only_session("codex", copy_root("codex", "intact", tmp_path))
    lines = file.path.read_bytes().split(b"\n")
    deep_array = b"[" * 10_000 + b"]" * 10_000
    deep_object = b'{"type":"event_msg","payload":' + b'{"a":' * 10_000 + b"1" + b"}" * 10_001
    file.path.write_bytes(b"\n".join(lines[:2] + [deep_array, deep_object] + lines[2:]))
    result = reader.read(file)
    assert [(d.line, d.kind) for d in result.damage] == [(3, "unparsable"), (4, "unparsable")]
    assert result.summary.operations == 3 and result.summary.lines == 23


def test_a_tool_input_too_deep_to_digest_is_still_an_operation(tmp_path: Path) -> None:
    """A generated Claude tool_use whose input nests 600 deep (orjson parses it, cannot write it)."""
    t = GEN.Transcript()
    deep: object = 1
    for _ in range(600):
        deep = {"a": deep}
    cfg = tmp_path / "cfg/projects/p"
    cfg.mkdir(parents=True)
    (cfg / f"{GEN.CLAUDE_SESSION}.jsonl").write_bytes(GEN.dump([
        t.user(0, 1, None, "go"), t.assistant(1, 2, 1, "m", GEN.tool("toolu_deep", "Bash", {"x": deep}))]))
    result = agents.get("claude").read(only_session("claude", tmp_path / "cfg"))
    assert [(r["operation_id"], r["args_digest"]) for r in result.records if r["type"] == "operation"] == [
        ("toolu_deep", None)]


def test_reading_never_changes_anything_under_the_agent_roots(tmp_path: Path) -> None:
    """Every fixture root of both agents: digest before and after discovery, full and re-reads."""
    before = tree_digest(AGENT_FIXTURES)
    copy = Path(tmp_path / "copy")
    shutil.copytree(AGENT_FIXTURES, copy)
    copy_before = tree_digest(copy)
    for agent in ("codex", "claude"):
        for scenario in sorted(p for p in (copy / agent).iterdir()):
            for found, result in agents.get(agent).scan([scenario]):
                assert not isinstance(result, AgentLogUnreadable)
                again = agents.get(agent).read(found, result.checkpoint)
                assert again.mode == "unchanged"
                result.rollout()
    assert tree_digest(copy) == copy_before
    assert tree_digest(AGENT_FIXTURES) == before


def test_a_compressed_rollout_that_changes_is_read_whole(tmp_path: Path) -> None:
    """fixtures/agents/codex/zst rewritten in place (same inode) with 3 more lines."""
    reader = agents.get("codex")
    file = only_session("codex", copy_root("codex", "zst", tmp_path))
    first = reader.read(file)
    plain = zstandard.ZstdDecompressor().decompressobj().decompress(file.path.read_bytes())
    with open(file.path, "r+b") as handle:
        handle.write(zstandard.ZstdCompressor().compress(plain + MORE["codex"]()))
        handle.truncate()
    later = reader.read(file, first.checkpoint)
    assert later.mode == "full" and later.reason in ("compressed file changed", "rewritten")
    assert later.lines_parsed == first.lines_parsed + 3 and later.summary.in_doubt == 1


def test_a_rewind_in_appended_lines_rereads_the_transcript_whole(tmp_path: Path) -> None:
    """fixtures/agents/claude/rewind_branch cut before the rewind, then the rest appended."""
    reader = agents.get("claude")
    file = only_session("claude", copy_root("claude", "rewind_branch", tmp_path))
    data = file.path.read_bytes()
    cut = data.index(b'"Instead, fix the rounding')
    cut = data.rindex(b"\n", 0, cut) + 1
    file.path.write_bytes(data[:cut])
    first = reader.read(file)
    assert first.summary.rewound_lines == 0
    _append(file, data[cut:])
    later = reader.read(file, first.checkpoint)
    assert (later.mode, later.reason) == ("full", "rewind")
    assert later.summary.rewound_lines == 6
    assert later.records == reader.read(file).records


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_a_checkpoint_survives_a_json_round_trip(agent: str, tmp_path: Path) -> None:
    """fixtures/agents/<agent>/intact: the checkpoint as the index would store it, read back."""
    reader, file = agents.get(agent), _intact(agent, tmp_path)
    stored = orjson.dumps(reader.read(file).checkpoint.to_json())
    checkpoint = Checkpoint.from_json(orjson.loads(stored))
    assert reader.read(file, checkpoint).mode == "unchanged"
    _append(file, MORE[agent]())
    assert reader.read(file, checkpoint).lines_parsed == 3
    with pytest.raises(ValueError):
        Checkpoint.from_json({"agent": "codex"})


def test_one_vanished_file_never_hides_the_others(tmp_path: Path) -> None:
    """Two generated Claude sessions; the second is deleted between discovery and reading."""
    project = tmp_path / "cfg/projects/p"
    project.mkdir(parents=True)
    for n, sid in enumerate(("11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222")):
        (project / f"{sid}.jsonl").write_bytes(GEN.dump([GEN.Transcript(session=sid).user(n, 1, None, "hi")]))
    results = []
    for _found, result in agents.get("claude").scan([tmp_path / "cfg"]):
        results.append(result)
        (project / "22222222-2222-4222-8222-222222222222.jsonl").unlink(missing_ok=True)
    assert [type(r).__name__ for r in results] == ["Read", "AgentLogUnreadable"]
    error = results[1]
    assert isinstance(error, AgentLogUnreadable) and error.exit_code == 74 and "22222222" in str(error)
    missing = AgentFile("claude", "session", tmp_path / "nope.jsonl", tmp_path)
    with pytest.raises(AgentLogUnreadable):
        agents.get("claude").read(missing)


def test_blank_lines_are_neither_damage_nor_records(tmp_path: Path) -> None:
    """fixtures/agents/codex/intact with blank lines between its lines."""
    reader = agents.get("codex")
    file = only_session("codex", copy_root("codex", "intact", tmp_path))
    intact = reader.read(file).records
    file.path.write_bytes(file.path.read_bytes().replace(b"\n", b"\n\n"))
    result = reader.read(file)
    assert result.records == intact and not result.damage and result.tail is None


def test_reading_an_agent_log_imports_neither_pydantic_nor_zstandard() -> None:
    """fixtures/agents/claude/intact read for its summary in a fresh interpreter."""
    code = ("import sys; from sessionkeeper import agents;"
            f"f = next(agents.get('claude').discover([__import__('pathlib').Path({str(AGENT_FIXTURES)!r})"
            " / 'claude/intact']));"
            "s = agents.get('claude').read(f).summary; assert s.messages == 3;"
            "print(sorted(m for m in ('pydantic', 'zstandard', 'git') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.timeout(30)
def test_a_fifo_or_a_device_named_like_a_rollout_is_unreadable_and_never_blocks(
        tmp_path: Path) -> None:
    """fixtures/agents/codex/intact copied, plus a FIFO and a symlink to /dev/zero named like
    rollouts in its day folder (the open of one would wait for a writer, the other never ends)."""
    home = copy_root("codex", "intact", tmp_path)
    day = next(home.glob("sessions/*/*/*"))
    os.mkfifo(day / "rollout-2026-11-28T10-00-00-019a7c00-0000-7000-8000-000000000001.jsonl")
    os.symlink("/dev/zero", day / "rollout-2026-11-28T10-00-01-019a7c00-0000-7000-8000-000000000002.jsonl")
    results = [result for _, result in agents.get("codex").scan([home])]
    assert sorted(type(r).__name__ for r in results) == ["AgentLogUnreadable", "AgentLogUnreadable",
                                                         "Read"]
    assert all("not a regular file" in str(r) for r in results if isinstance(r, AgentLogUnreadable))
