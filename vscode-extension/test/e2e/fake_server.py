"""A stand-in Session Keeper LSP server for the extension's end-to-end test (pygls 2.1.1).

It answers the `session/*` requests of PROTOCOL.md with canned data and pushes `session/didChange`
after `initialized` and after every resume/fork. Every request is appended as one JSON line to
$FAKE_SERVER_LOG (when set) so the e2e test can assert what the extension sent.
Canned threads: "Fix payment rounding" (ok), "Refactor ledger" (drift), "Migrate store" (blocked),
plus a second page of two older threads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, default_converter

logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="fake-server: %(message)s")
LOG = logging.getLogger("fake")
LOG.setLevel(logging.INFO)


def raw_json_converter():
    """Keeps custom-method params as plain dicts (pygls would make namedtuples)."""
    conv = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        conv.register_structure_hook(cls, lambda obj, c: c(**obj))
    return conv


NOW = datetime.now(timezone.utc)


def ago(**kw) -> str:
    return (NOW - timedelta(**kw)).isoformat().replace("+00:00", "Z")


def tid(n: int) -> str:
    return f"{n:08d}-0000-4000-8000-{n:012d}"


def thread(n, title, branch, state, act, todos, tests, sessions=1, archived=False):
    return {
        "thread_id": tid(n), "title": title, "cwd": os.environ.get("FAKE_WORKSPACE", "/ws"),
        "branch": branch, "created_at": ago(days=3 + n), "last_activity": act, "archived": archived,
        "session_count": sessions, "event_count": 40 * n, "damaged": False,
        "todos": todos, "tests": tests, "state": state,
    }


THREADS = [
    thread(1, "Fix payment rounding", "fix/payment", "ok", ago(minutes=5), {"done": 3, "total": 5}, {"passed": 7, "total": 9}, 2),
    thread(2, "Refactor ledger", "refactor/ledger", "drift", ago(hours=2), {"done": 1, "total": 4}, {"passed": 12, "total": 12}),
    thread(3, "Migrate store", "main", "blocked", ago(days=1), None, None),
    thread(4, "Add CSV export", "feat/csv", "ok", ago(days=4), {"done": 6, "total": 6}, {"passed": 20, "total": 20}, 3),
    thread(5, "Old spike", None, None, ago(days=60), None, None, archived=True),
]
PAGE = 3
SESSIONS = {t["thread_id"]: str(uuid.UUID(int=i + 100)) for i, t in enumerate(THREADS)}


def status_of(t: dict, verdict: str | None = "ok") -> dict:
    return {
        "thread_id": t["thread_id"], "session_id": SESSIONS[t["thread_id"]], "agent": "native", "title": t["title"],
        "branch": t["branch"], "verdict": verdict, "drift": verdict == "drift",
        "todos": t["todos"] or {"done": 0, "total": 0}, "tests": t["tests"], "cost_usd": 0.42,
    }


def report_of(t: dict) -> dict:
    verdict = t["state"] or "ok"
    diffs = []
    if verdict == "drift":
        diffs = [
            {"kind": "branch", "recorded": t["branch"], "current": "main", "detail": None},
            {"kind": "file_changed", "recorded": "sha256:1f2e", "current": "sha256:9a8b", "detail": "src/ledger.py"},
        ]
    elif verdict == "blocked":
        diffs = [{"kind": "cwd_missing", "recorded": "/srv/old-checkout", "current": None, "detail": None}]
    choices = {"drift": ["continue", "switch_back", "fork", "cancel"], "blocked": ["relocate", "fork", "export"]}.get(verdict, [])
    return {
        "verdict": verdict, "thread_id": t["thread_id"], "restored_to_seq": t["event_count"],
        "differences": diffs, "invalidated": [{"subsystem": "verifier", "reason": "src/ledger.py changed after the tests ran"}] if verdict == "drift" else [],
        "in_doubt_operations": [{"operation_id": "op-17", "tool": "shell", "seq": 38}] if verdict == "drift" else [],
        "rerun_verifier": verdict == "drift", "quarantined": [], "damaged": [], "hook_failures": [],
        "choices": choices, "workspace": os.environ.get("FAKE_WORKSPACE", "/ws"), "agent": "native",
        "title": t["title"], "subsystems": subsystems_of(t), "notes": [], "facts": {},
    }


def subsystems_of(t: dict) -> dict:
    """The report's subsystems as the real server sends them: a summary and a headline each."""
    todos, tests = t["todos"], t["tests"]
    return {
        "todos": {"summary": todos or {}, "headline": f"{todos['done']}/{todos['total']} done" if todos else "none"},
        "verifier": {"summary": {"tests": tests}, "headline": f"tests {tests['passed']}/{tests['total']} passed" if tests else "not run"},
        "cost": {"summary": {"usd": 0.42}, "headline": "$0.4200"},
        "model": {"summary": {"effective": "fake-model"}, "headline": "fake-model"},
    }


class FakeServer(LanguageServer):
    def __init__(self):
        super().__init__("sessionkeeper-fake", "0.0.1", converter_factory=raw_json_converter)
        self.current: dict | None = None


server = FakeServer()


def record(method: str, params) -> None:
    path = os.environ.get("FAKE_SERVER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"method": method, "params": params, "t": time.time()}) + "\n")


def find(thread_id: str) -> dict:
    for t in THREADS:
        if t["thread_id"] == thread_id:
            return t
    raise ValueError(f"unknown thread {thread_id}")


def set_current(ls: FakeServer, status: dict | None) -> None:
    ls.current = status
    ls.protocol.notify("session/didChange", status)


@server.feature(types.INITIALIZED)
async def on_initialized(ls: FakeServer, params) -> None:
    record("initialized", {"argv": sys.argv, "home": os.environ.get("SESSIONKEEPER_HOME"), "cwd": os.getcwd()})
    await asyncio.sleep(0.2)
    set_current(ls, status_of(THREADS[0]))


@server.feature("session/list")
def session_list(ls: FakeServer, params) -> dict:
    params = params or {}
    record("session/list", params)
    rows = [t for t in THREADS if params.get("all") or not t["archived"]]
    start = int(params.get("cursor") or 0)
    end = start + min(int(params.get("limit") or PAGE), PAGE)
    return {"threads": rows[start:end], "next_cursor": str(end) if end < len(rows) else None}


@server.feature("session/current")
def session_current(ls: FakeServer, params) -> dict | None:
    record("session/current", params)
    return ls.current


@server.feature("session/show")
def session_show(ls: FakeServer, params) -> dict:
    record("session/show", params)
    t = find(params["thread_id"])
    timeline = [
        {"seq": 1, "ts": t["created_at"], "type": "session_meta", "summary": f"started on {t['branch']}"},
        {"seq": 2, "ts": t["created_at"], "type": "todo", "summary": "write the failing test"},
        {"seq": 3, "ts": t["last_activity"], "type": "tool_call", "summary": "pytest -q → 7 passed, 2 failed"},
    ]
    return {"thread": t, "sessions": [{"session_id": SESSIONS[t["thread_id"]], "started_at": t["created_at"]}], "timeline": timeline}


@server.feature("session/checkResume")
def session_check(ls: FakeServer, params) -> dict:
    record("session/checkResume", params)
    return report_of(find(params["thread_id"]) if params.get("thread_id") else THREADS[0])


@server.feature("session/resume")
def session_resume(ls: FakeServer, params) -> dict:
    record("session/resume", params)
    t = find(params["thread_id"])
    decision = params.get("decision") or "continue"
    rep = report_of(t)
    rep["decision"] = decision
    if decision == "switch_back":  # like the real server: show the command, never run it
        rep["switch_back"] = f"git checkout {t['branch']}"
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=f"Run: {rep['switch_back']}"))
    if decision == "export":
        rep["export_path"] = os.path.join(os.environ.get("SESSIONKEEPER_HOME") or "/tmp", f"export-{t['thread_id']}.jsonl")
        with open(rep["export_path"], "w", encoding="utf-8") as f:
            f.write(json.dumps({"thread": t}) + "\n")
    if decision in ("cancel", "switch_back", "export"):
        return {"report": rep, "thread_id": t["thread_id"], "session_id": None}
    set_current(ls, status_of(t, rep["verdict"]))
    return {"report": rep, "thread_id": t["thread_id"], "session_id": str(uuid.uuid4())}


@server.feature("session/fork")
def session_fork(ls: FakeServer, params) -> dict:
    record("session/fork", params)
    return {"thread_id": str(uuid.uuid4()), "session_id": str(uuid.uuid4())}


@server.feature("session/archive")
def session_archive(ls: FakeServer, params) -> dict:
    record("session/archive", params)
    if ls.current and ls.current["thread_id"] == params["thread_id"]:
        set_current(ls, None)
    return {"thread_id": params["thread_id"], "archived": True}


@server.feature("session/unarchive")
def session_unarchive(ls: FakeServer, params) -> dict:
    record("session/unarchive", params)
    return {"thread_id": params["thread_id"], "archived": False}


@server.feature("session/start")
def session_start(ls: FakeServer, params) -> dict:
    record("session/start", params)
    return {"thread_id": str(uuid.uuid4()), "session_id": str(uuid.uuid4())}


@server.feature("session/record")
def session_record(ls: FakeServer, params) -> dict:
    record("session/record", params)
    return {"acks": [{"seq": i + 1, "durability": params.get("durability") or "written"} for i, _ in enumerate(params["events"])]}


@server.feature("session/reindex")
async def session_reindex(ls: FakeServer, params) -> dict:
    record("session/reindex", params)
    token = str(uuid.uuid4())
    await ls.work_done_progress.create_async(token)
    ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title="Reindexing sessions", percentage=0))
    for i in range(len(THREADS)):
        await asyncio.sleep(0.1)
        ls.work_done_progress.report(token, types.WorkDoneProgressReport(message=f"{i + 1}/{len(THREADS)}", percentage=int(100 * (i + 1) / len(THREADS))))
    ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    return {"threads": len(THREADS), "sessions": len(THREADS) + 3, "damaged": 0}


if __name__ == "__main__":
    if "--stdio" not in sys.argv:
        LOG.warning("started without --stdio: %s", sys.argv)
    server.start_io()
