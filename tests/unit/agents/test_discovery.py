"""Which agent files changed since their checkpoints (`agents.discovery`, through
`Agent.changes`): new and grown files listed, gone ones named, unchanged ones only stat'ed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sessionkeeper import agents
from sessionkeeper.agents.base import AgentFile
from tests.unit._agents import copy_root, generator, only_session

GEN = generator()


def _append(file: AgentFile, data: bytes) -> None:
    with open(file.path, "ab") as handle:
        handle.write(data)


def _sessions(where: Path, count: int) -> list[Path]:
    project = where / "projects/p"
    project.mkdir(parents=True, exist_ok=True)
    paths = []
    for n in range(count):
        sid = f"{n + 1:08d}-0000-4000-8000-000000000000"
        path = project / f"{sid}.jsonl"
        path.write_bytes(GEN.dump([GEN.Transcript(session=sid).user(n, 1, None, f"task {n}")]))
        paths.append(path)
    return paths


def test_changes_lists_only_new_and_changed_files_and_names_the_gone_ones(tmp_path: Path) -> None:
    """Three generated Claude sessions: one grows, one is deleted, one is added, one stays."""
    claude = agents.get("claude")
    grows, goes, stays = _sessions(tmp_path / "cfg", 3)
    first = claude.changes([tmp_path / "cfg"], checkpoints={})
    assert [f.path for f in first.changed] == [grows, goes, stays] and first.unchanged == []
    checkpoints = {str(f.path): claude.read(f).checkpoint for f in first.changed}
    _append(AgentFile("claude", "session", grows, tmp_path), GEN.dump([GEN.Transcript(
        session=grows.stem).user(9, 2, 1, "more")]))
    goes.unlink()
    added = _sessions(tmp_path / "new", 4)[-1]
    shutil.move(str(added), grows.parent / added.name)
    later = claude.changes([tmp_path / "cfg"], checkpoints=checkpoints)
    assert [f.path.name for f in later.changed] == [grows.name, added.name]
    assert later.unchanged == [str(stays)] and later.gone == [str(goes)]
    reads = [claude.read(f, checkpoints.get(str(f.path))) for f in later.changed]
    assert [(r.mode, r.lines_parsed) for r in reads] == [("appended", 1), ("full", 1)]


def test_changes_trusts_an_unchanged_stat_without_opening_the_file(tmp_path: Path) -> None:
    """A generated session overwritten in place with garbage of the same size and mtime: skipped."""
    claude = agents.get("claude")
    [path] = _sessions(tmp_path / "cfg", 1)
    checkpoints = {str(path): claude.read(only_session("claude", tmp_path / "cfg")).checkpoint}
    st = path.stat()
    with open(path, "r+b") as handle:  # same inode, same size
        handle.write(b"#" * st.st_size)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    later = claude.changes([tmp_path / "cfg"], checkpoints=checkpoints)
    assert later.changed == [] and later.unchanged == [str(path)]
    fresh = claude.read(only_session("claude", tmp_path / "cfg"))  # without a checkpoint: all read
    assert fresh.records == [] and fresh.tail is not None


def test_changes_sees_a_changed_companion_file(tmp_path: Path) -> None:
    """fixtures/agents/claude/legacy_todos: the legacy todo file changes, the transcript does not."""
    claude = agents.get("claude")
    where = copy_root("claude", "legacy_todos", tmp_path)
    file = only_session("claude", where)
    checkpoints = {str(file.path): claude.read(file).checkpoint}
    assert claude.changes([where], checkpoints=checkpoints).unchanged == [str(file.path)]
    todo = file.companions[0]
    todo.write_text(todo.read_text().replace('"pending"', '"completed"'))
    [changed] = claude.changes([where], checkpoints=checkpoints).changed
    again = claude.read(changed, checkpoints[str(file.path)])
    assert (again.mode, again.reason) == ("full", "companion file changed")
    assert [r["items"][1]["status"] for r in again.records if r["type"] == "todo"] == ["done"]
