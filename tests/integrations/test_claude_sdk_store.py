"""SessionKeeperSessionStore beyond the suite: hostile keys never name a path, uuids stay
idempotent across processes, transcripts are listed and checked like any thread."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import cast

import orjson
import pytest
from claude_agent_sdk.types import SessionKey, SessionStoreEntry  # noqa: E402

from sessionkeeper.api import Keeper  # noqa: E402
from sessionkeeper.errors import InvalidId  # noqa: E402
from sessionkeeper.integrations.claude_sdk import SessionKeeperSessionStore  # noqa: E402

from ..conftest import open_files  # noqa: E402


def entry(**fields: object) -> SessionStoreEntry:
    """A transcript entry (opaque JSON with a `type`)."""
    return cast(SessionStoreEntry, {"type": "x", **fields})


def key(project: str, session: str, subpath: str | None = None) -> SessionKey:
    """An SDK session key."""
    out: SessionKey = {"project_key": project, "session_id": session}
    if subpath is not None:
        out["subpath"] = subpath
    return out


HOSTILE = ["../../../etc", "/etc/passwd", "a/../../b", "..\\x", "x\0y", "CON", "é" * 300, ""]


def run_cli(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `sessionkeeper` CLI against `store`."""
    return subprocess.run([sys.executable, "-m", "sessionkeeper", *args, "--store", str(store)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"})


def test_hostile_keys_round_trip_and_every_file_stays_inside_the_store(tmp_path: Path) -> None:
    """Fixture: project keys, session ids and subpaths shaped like path attacks."""
    store_dir = tmp_path / "store"
    store = SessionKeeperSessionStore(store_dir)
    try:
        for n, nasty in enumerate(HOSTILE):
            where = key(nasty, nasty or "s", f"{nasty}/{n}")
            store.append_sync(where, [entry(uuid=f"u{n}", n=n)])
            assert store.load_sync(where) == [entry(uuid=f"u{n}", n=n)]
            assert store.list_subkeys_sync({"project_key": nasty,
                                            "session_id": nasty or "s"}) == [f"{nasty}/{n}"]
    finally:
        store.close()
    outside = [p for p in tmp_path.rglob("*") if store_dir not in p.parents and p != store_dir]
    assert outside == []
    names = {p.name for p in (store_dir / "integrations" / "claude-sdk").rglob("*")}
    assert all(len(name) == 36 and name.count("-") == 4 for name in names)


def test_a_key_without_a_session_id_is_a_typed_error(tmp_path: Path) -> None:
    """Fixture: keys the SDK would never send."""
    store = SessionKeeperSessionStore(tmp_path / "store")
    with pytest.raises(InvalidId):
        store.append_sync(key("p", ""), [entry()])
    with pytest.raises(InvalidId):
        store.load_sync(key("p", "s", ""))


def test_an_entry_uuid_appended_before_is_not_appended_again_by_a_new_store(
        tmp_path: Path) -> None:
    """Fixture: two store instances one after the other (two processes) on one transcript."""
    main = key("p", "s")
    first = SessionKeeperSessionStore(tmp_path / "store")
    first.append_sync(main, [entry(uuid="a"), entry()])
    first.close()
    second = SessionKeeperSessionStore(tmp_path / "store")
    second.append_sync(main, [entry(uuid="a"), entry(uuid="b"), entry()])
    assert [e.get("uuid") for e in second.load_sync(main) or []] == ["a", None, "b", None]
    second.close()


def test_transcripts_are_listed_with_their_agent_and_pass_the_resume_check(
        tmp_path: Path) -> None:
    """Fixture: one main transcript and one subagent transcript of a session."""
    store_dir = tmp_path / "store"
    store = SessionKeeperSessionStore(store_dir)
    main = key("-home-dev-repo", "0b6c9a1e-sess")
    store.append_sync(main, [entry(uuid="a", message={"content": "hi"})])
    store.append_sync(key("-home-dev-repo", "0b6c9a1e-sess", "subagents/agent-1"),
                      [entry(uuid="b")])
    store.close()
    listed = orjson.loads(run_cli(store_dir, "list", "--json").stdout)
    assert sorted((t["agent"], t["title"]) for t in listed) == \
        [("claude-sdk", "0b6c9a1e-sess"), ("claude-sdk", "subagents/agent-1")]
    thread = store.thread_id(main)
    (row,) = [t for t in listed if t["thread_id"] == thread]
    checked = run_cli(store_dir, "--check-resume", thread, "--workspace", row["cwd"], "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert orjson.loads(checked.stdout)["verdict"] == "ok"


def test_closing_a_store_closes_the_keeper_it_made_and_leaves_a_given_one_open(
        tmp_path: Path) -> None:
    """Fixture: one store made from a path, one given a Keeper, each with a transcript read back:
    closing the first leaves no file of its store open; closing the second leaves the caller's
    Keeper (its index) open until the caller closes it."""
    made = SessionKeeperSessionStore(tmp_path / "made")
    made.append_sync(key("p", "s"), [entry(uuid="a")])
    assert made.load_sync(key("p", "s")) and open_files(tmp_path / "made") != []
    made.close()
    assert open_files(tmp_path / "made") == []
    with Keeper(tmp_path / "given") as keeper:
        given = SessionKeeperSessionStore(keeper)
        given.append_sync(key("p", "s"), [entry(uuid="a")])
        assert given.load_sync(key("p", "s"))
        keeper.threads()
        given.close()
        assert any(f.endswith("state.db") for f in open_files(tmp_path / "given"))
    assert open_files(tmp_path / "given") == []
