"""What the server's first listing costs (issue 13): it loads only what a listing needs, and
what it defers still arrives when first needed (fixtures: `repo`, `store_dir`, conftest; a real
git repository, a real store, a fresh interpreter per probe)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from sessionkeeper.lsp.app import dispatch
from sessionkeeper.lsp.options import ServerOptions
from sessionkeeper.lsp.server import SessionKeeperServer

SERVER = str(Path(__file__).resolve().parents[2] / "server")
PROBE = """
import asyncio, json, sys
from sessionkeeper.lsp.app import dispatch
from sessionkeeper.lsp.options import ServerOptions
from sessionkeeper.lsp.server import SessionKeeperServer

ls = SessionKeeperServer(store=sys.argv[1])
ls.workspace_root = sys.argv[2]
ls.options = ServerOptions(watch=False)
listed = asyncio.run(dispatch(ls, "session/list", {}))
ls.close_all()
print(json.dumps({"listed": len(listed["threads"]), "modules": sorted(sys.modules)}))
"""


def _listing_modules(store: Path, workspace: Path, home: Path) -> tuple[int, set[str]]:
    env = {**os.environ, "PYTHONPATH": SERVER, "HOME": str(home), "GIT_CONFIG_GLOBAL": "/dev/null"}
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", PROBE, str(store), str(workspace)], env=env,
                          capture_output=True, text=True, check=True)
    out = json.loads(done.stdout.splitlines()[-1])
    return out["listed"], set(out["modules"])


def test_the_first_listing_imports_no_record_schema_nor_shutil(repo: Path, store_dir: Path,
                                                    tmp_path: Path) -> None:
    """Fixtures: `repo`, `store_dir` with one thread started in `repo` (API, this process)."""
    from sessionkeeper.api import Keeper

    Keeper(store_dir).start(repo, title="listed").close()
    home = tmp_path / "home"
    home.mkdir()
    listed, modules = _listing_modules(store_dir, repo, home)
    assert listed == 1
    assert "sessionkeeper.api" in modules  # the probe did list through the Keeper
    assert {m for m in modules if m == "sessionkeeper.schema" or m.startswith(
        "sessionkeeper.schema.")} == set()
    assert "shutil" not in modules  # only archiving moves rollouts



def test_the_first_listing_without_hooks_loads_no_hook_lifecycle(repo: Path, store_dir: Path,
                                                                 tmp_path: Path) -> None:
    """Fixtures: `repo`, `store_dir` with one thread started in `repo`; options naming no hooks:
    the Keeper gets no registry (its empty one is made when a session first runs hooks)."""
    from sessionkeeper.api import Keeper

    Keeper(store_dir).start(repo, title="listed").close()
    home = tmp_path / "home"
    home.mkdir()
    listed, modules = _listing_modules(store_dir, repo, home)
    assert listed == 1
    assert "sessionkeeper.recovery.summary" in modules  # the probe did list with estimates
    assert "sessionkeeper.recovery.lifecycle" not in modules


async def test_the_first_listing_starts_the_workspaces_git_look_up_before_making_the_keeper(
        repo: Path, store_dir: Path, monkeypatch: Any) -> None:
    """Fixtures: `repo`, `store_dir` with one thread started in `repo`; an in-process server
    listing twice: the first listing asks its baseline cache for the workspace ahead while no
    Keeper exists yet, the second asks nothing ahead; both estimate the thread ok."""
    from sessionkeeper.api import Keeper
    from sessionkeeper.keeper.listing import BaselineCache

    Keeper(store_dir).start(repo, title="listed").close()
    ls = SessionKeeperServer(store=str(store_dir))
    ls.workspace_root, ls.options = os.path.realpath(repo), ServerOptions(watch=False)
    asked: list[tuple[str, bool]] = []
    real = BaselineCache.get_soon

    def get_soon(cache: BaselineCache, root: str) -> None:
        asked.append((root, ls._keeper is None))
        real(cache, root)

    monkeypatch.setattr(BaselineCache, "get_soon", get_soon)
    try:
        first = await dispatch(ls, "session/list", {})
        second = await dispatch(ls, "session/list", {})
        assert ls.keeper.baselines is ls.baselines
    finally:
        ls.close_all()
    assert asked == [(os.path.realpath(repo), True)]
    assert [t["state"] for t in first["threads"]] == [t["state"] for t in second["threads"]] == ["ok"]

async def test_a_session_started_after_a_listing_records_the_servers_client(
        repo: Path, store_dir: Path) -> None:
    """Fixtures: `repo`, `store_dir`; an in-process server for editor "vscode"."""
    ls = SessionKeeperServer(store=str(store_dir))
    ls.workspace_root, ls.editor = str(repo), "vscode"
    ls.options = ServerOptions(watch=False)
    ls.protocol.notify = lambda method, params=None: None  # type: ignore[method-assign]
    try:
        await dispatch(ls, "session/list", {})
        started = await dispatch(ls, "session/start", {"title": "after a listing"})
        path = await ls.run(lambda: ls.keeper.store.session_path(started["session_id"]))
    finally:
        ls.close_all()
    meta = orjson.loads(Path(path).read_bytes().split(b"\n", 1)[0])
    assert meta["client"]["name"] == "sessionkeeper-lsp (vscode)"
    assert meta["client"]["version"]


async def test_results_convert_to_what_dataclasses_asdict_makes_of_them(
        repo: Path, store_dir: Path) -> None:
    """Fixtures: `repo`, `store_dir`; an in-process server's real list, show, check and status
    results, and a value with a namedtuple, tuples, an enum, an OrderedDict and nested
    dataclasses."""
    import collections
    import dataclasses
    import enum

    from sessionkeeper.lsp.rpc import METHODS, structure, unstructure

    ls = SessionKeeperServer(store=str(store_dir))
    ls.workspace_root = str(repo)
    ls.options = ServerOptions(watch=False)
    ls.protocol.notify = lambda method, params=None: None  # type: ignore[method-assign]
    results: list[Any] = []
    try:
        started = await dispatch(ls, "session/start", {"title": "converted"})
        await dispatch(ls, "session/record", {"session_id": started["session_id"], "events": [
            {"type": "todo", "items": [{"id": "a", "text": "t", "status": "done"}]}]})
        for name, raw in (("session/list", {}), ("session/show", {"thread_id": started["thread_id"]}),
                          ("session/checkResume", {"thread_id": started["thread_id"]}),
                          ("session/current", {})):
            method = METHODS[name]
            results.append(await method.handler(ls, structure(raw, method.params)))
    finally:
        ls.close_all()

    class Kind(enum.Enum):
        ONE = 1

    Pair = collections.namedtuple("Pair", "left right")

    @dataclasses.dataclass(frozen=True)
    class Odd:
        value: Any
        more: Any = None

    results.append(Odd(value=[1, (2, Pair(3, [Odd(Kind.ONE)]))], more={
        "k": {"x": Odd(())}, "o": collections.OrderedDict(a=[Odd(1.5, (True, None))])}))
    assert all(dataclasses.is_dataclass(r) for r in results)
    for result in results:
        assert repr(unstructure(result)) == repr(dataclasses.asdict(result))



def test_a_dataclass_holding_more_than_its_fields_or_out_of_order_converts_as_asdict_does() -> None:
    """No fixture: a ThreadSummary as thread_summary makes it (its __dict__ is its fields, in
    order: copied at once), one with an attribute set beside its fields, one filled in reverse
    order, and a slotted dataclass (no __dict__)."""
    import dataclasses

    from sessionkeeper.lsp.rpc import unstructure
    from sessionkeeper.recovery.summary import Progress, ThreadSummary, thread_summary
    from sessionkeeper.store.index import ThreadRow

    made = thread_summary(ThreadRow(thread_id="t1", summary={"todos": {"done": 1, "total": 3}}),
                          estimate=("drift", "branch a → b"))
    extra = ThreadSummary(thread_id="t2", todos=Progress(done=0, total=1))
    object.__setattr__(extra, "cached", "not a field")
    reverse = object.__new__(ThreadSummary)
    reverse.__dict__.update(reversed(list(vars(ThreadSummary(thread_id="t3")).items())))

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        inner: Progress
        name: str = "s"

    for value in (made, extra, reverse, Slotted(inner=Progress(done=2, total=2))):
        converted = unstructure(value)
        assert repr(converted) == repr(dataclasses.asdict(value))
        assert list(converted) == [f.name for f in dataclasses.fields(value)]

def test_a_converted_result_is_sent_as_it_is_and_an_lsp_result_is_still_converted() -> None:
    """Fixture: the server's message converter; a ListResult converted by `unstructure`, and
    lsprotocol's InitializeResult (attrs) as pygls answers `initialize`."""
    from lsprotocol import types
    from pygls.protocol import JsonRPCResponseMessage

    from sessionkeeper.lsp.protocol import ListResult
    from sessionkeeper.lsp.rpc import unstructure
    from sessionkeeper.lsp.server import raw_json_converter
    from sessionkeeper.recovery.summary import Progress, ThreadSummary

    conv = raw_json_converter()
    page = unstructure(ListResult(threads=[ThreadSummary(thread_id="t1", todos=Progress(
        done=1, total=2))], next_cursor=None))
    sent = conv.unstructure(JsonRPCResponseMessage(id=7, result=page, jsonrpc="2.0"))
    assert sent == {"id": 7, "jsonrpc": "2.0", "result": page} and sent["result"] is page
    assert json.loads(json.dumps(sent))["result"]["threads"][0]["todos"] == {"done": 1, "total": 2}
    init = types.InitializeResult(capabilities=types.ServerCapabilities(hover_provider=True),
                                  server_info=types.ServerInfo(name="sessionkeeper"))
    sent = conv.unstructure(JsonRPCResponseMessage(id=1, result=init, jsonrpc="2.0"))
    assert sent["result"] == {"capabilities": {"hoverProvider": True},
                              "serverInfo": {"name": "sessionkeeper"}}
    assert conv.unstructure(JsonRPCResponseMessage(id=2, result=None, jsonrpc="2.0")) == {
        "id": 2, "jsonrpc": "2.0", "result": None}
