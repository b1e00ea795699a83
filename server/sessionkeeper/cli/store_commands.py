"""The store's commands: start, record, list, show, fork, archive, unarchive, fsck, reindex,
sync, schema, demo."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import re
import sys
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, get_args

import orjson

from ..errors import InvalidEvent, InvalidId
from .common import AGENT_OPTIONS, COMMON, Subparsers, emit, import_progress, keeper, reader, say

if TYPE_CHECKING:
    from ..store.fsck import FsckReport


def add(sub: Subparsers, only: Collection[str] | None = None) -> None:
    """Add the store's subcommands (only those in `only`, when given)."""
    for name, adder in _PARSERS.items():
        if only is None or name in only:
            adder(sub)


def _add_start(sub: Subparsers) -> None:
    from ..events import ApprovalMode, SandboxPolicy
    from .content import CONTENT

    start = sub.add_parser("start", parents=[COMMON, CONTENT], help="start a thread; prints its ids")
    start.add_argument("--workspace", required=True)
    start.add_argument("--title")
    start.add_argument("--model")
    start.add_argument("--approval-mode", default="on-request", choices=get_args(ApprovalMode))
    start.add_argument("--sandbox-policy", default="workspace-write", choices=get_args(SandboxPolicy))
    start.add_argument("--tool-profile", default="default")
    start.set_defaults(run=start_thread)


def _add_record(sub: Subparsers) -> None:
    from .content import CONTENT

    record = sub.add_parser("record", parents=[COMMON, CONTENT],
                            help="append JSON-lines events from stdin")
    record.add_argument("--session", required=True)
    record.add_argument("--durability", choices=["none", "written", "durable"], default="written")
    record.set_defaults(run=record_events)


def _add_list(sub: Subparsers) -> None:
    lst = sub.add_parser("list", parents=[COMMON, AGENT_OPTIONS],
                         help="threads, newest first (Codex and Claude Code sessions too)")
    lst.add_argument("--workspace")
    lst.add_argument("--all", action="store_true", help="include archived threads")
    lst.add_argument("--archived", action="store_true", help="only archived threads")
    lst.add_argument("--agent", help="only threads of this agent (native, codex, claude, ...)")
    lst.add_argument("--machine", help="only threads last recorded on this machine (host name)")
    lst.add_argument("--limit", type=_positive, default=50)
    lst.set_defaults(run=list_threads)


def _add_show(sub: Subparsers) -> None:
    show = sub.add_parser("show", parents=[COMMON, AGENT_OPTIONS],
                          help="a thread's sessions and state")
    show.add_argument("thread")
    show.set_defaults(run=show_thread)


def _add_fork(sub: Subparsers) -> None:
    fork = sub.add_parser("fork", parents=[COMMON], help="fork a thread at a seq")
    fork.add_argument("thread")
    fork.add_argument("--at", type=int, default=None, metavar="SEQ")
    fork.add_argument("--workspace")
    fork.set_defaults(run=fork_thread)


def _add_archiver(name: str, archived: bool) -> Callable[[Subparsers], None]:
    def add_one(sub: Subparsers) -> None:
        cmd = sub.add_parser(name, parents=[COMMON], help=f"{name} a thread")
        cmd.add_argument("thread")
        cmd.set_defaults(run=_archiver(name, archived))

    return add_one


def _add_fsck(sub: Subparsers) -> None:
    fsck = sub.add_parser("fsck", parents=[COMMON],
                          help="compare the index with the rollouts (exit 1: problems left)")
    fsck.add_argument("--repair", action="store_true")
    fsck.set_defaults(run=check_store)


def _add_reindex(sub: Subparsers) -> None:
    sub.add_parser("reindex", parents=[COMMON],
                   help="rebuild the index from the rollouts").set_defaults(run=reindex)


def _add_sync(sub: Subparsers) -> None:
    sync = sub.add_parser("sync", parents=[COMMON],
                          help="push this store's sessions and blobs to the shared index (--index)")
    sync.add_argument("--thread", help="only this thread")
    sync.set_defaults(run=sync_store)


def _add_schema(sub: Subparsers) -> None:
    sub.add_parser("schema", parents=[COMMON],
                   help="print the JSON Schema of a rollout line").set_defaults(run=schema)


def _add_demo(sub: Subparsers) -> None:
    demo = sub.add_parser("demo", parents=[COMMON], help="the whole story in a scratch directory")
    demo.add_argument("--dir", help="scratch directory (default: a new temp dir, kept)")
    demo.set_defaults(run=demo_story)


_PARSERS: dict[str, Callable[[Subparsers], None]] = {
    "start": _add_start, "record": _add_record, "list": _add_list, "show": _add_show,
    "fork": _add_fork, "archive": _add_archiver("archive", True),
    "unarchive": _add_archiver("unarchive", False), "fsck": _add_fsck, "reindex": _add_reindex,
    "sync": _add_sync, "schema": _add_schema, "demo": _add_demo,
}
"""Each command's parser, in the order `--help` lists them (a command line naming one adds
only that one)."""


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def start_thread(args: argparse.Namespace) -> int:
    """Start a thread and print `THREAD SESSION` (or JSON)."""
    from ..recovery import queries

    queries.look_ahead(args.workspace, queries.HEAD, queries.ROOTS, queries.REMOTE,
                       *queries.CHANGED)  # git answers while the Keeper's modules load
    session = keeper(args).start(args.workspace, title=args.title, model=args.model,
                                 permissions={"approval_mode": args.approval_mode,
                                              "sandbox_policy": args.sandbox_policy,
                                              "tool_profile": args.tool_profile})
    out = {"thread_id": session.thread_id, "session_id": session.session_id, "path": session.path}
    session.close()
    emit(out) if args.json else say(f"{out['thread_id']} {out['session_id']}")
    return 0


def record_events(args: argparse.Namespace) -> int:
    """Append JSON lines from stdin; one ack (or error) line per event, the stream goes on."""
    session = keeper(args).attach(args.session)
    code = 0
    try:
        for number, line in enumerate(sys.stdin, start=1):
            if not line.strip():
                continue
            try:
                ack = session.record(_exact(line), durability=args.durability)
                out = {"line": number, "seq": ack.seq, "durability": ack.durability.value,
                       "duplicate": ack.duplicate}
            except (ValueError, InvalidEvent, InvalidId) as exc:  # JSONDecodeError is a ValueError
                name = getattr(exc, "name", "invalid_event")
                out, code = {"line": number, "error": name, "message": str(exc)}, 65
                print(f"sessionkeeper: line {number}: {name}: {exc}", file=sys.stderr)
            say(orjson.dumps(out).decode())
    finally:
        session.close()
    return code


@functools.cache  # only `record` reads JSON lines
def _long_number() -> re.Pattern[str]:
    return re.compile(r"\d{19,}")


def _exact(line: str) -> Any:
    """A JSON line decoded without turning integers beyond 64 bits into floats (they are then
    refused as not encodable, never stored rounded); what orjson refuses is refused here too
    (NaN and Infinity are no JSON, a line nested too deeply a ValueError, never a traceback)."""
    if _long_number().search(line):
        try:  # exact integers; orjson would make them floats
            return json.loads(line, parse_constant=_no_constant)
        except RecursionError:
            raise ValueError("the line is nested too deeply") from None
    return orjson.loads(line)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def list_threads(args: argparse.Namespace) -> int:
    """Threads, newest first (with a resume estimate when --workspace is given)."""
    if args.workspace:  # the estimate's git calls run while the reader's modules load
        from ..recovery import queries

        queries.look_ahead(args.workspace, queries.HEAD, queries.ROOTS)
    rows = reader(args).threads(
        workspace=args.workspace, include_archived=args.all, archived_only=args.archived,
        limit=args.limit, agent=args.agent, machine=args.machine, progress=import_progress())
    if args.json:
        emit(rows)
    else:
        from ..render import threads_text

        say(threads_text(rows))
    return 0


def show_thread(args: argparse.Namespace) -> int:
    """A thread's sessions and its restored state (checked where it last ran)."""
    from ..render import clean, report_text

    k = reader(args)
    k.import_agents(import_progress())
    rows = k.thread_sessions(args.thread)
    report = k.check_resume(args.thread, workspace=rows[-1].cwd or os.getcwd())
    if args.json:
        emit({"sessions": rows, "state": report.to_json()})
        return 0
    say(f"thread {args.thread}: {len(rows)} session(s)")
    for r in rows:
        say(f"  {r.session_id}  {r.source:<8} seq ≤{r.last_seq:<6} {clean(r.path)}")
    say("")
    say(report_text(report))
    return 0


def fork_thread(args: argparse.Namespace) -> int:
    """Fork a thread; print the new `THREAD SESSION`."""
    session = keeper(args).fork(args.thread, at_seq=args.at, workspace=args.workspace)
    out = {"thread_id": session.thread_id, "session_id": session.session_id}
    session.close()
    emit(out) if args.json else say(f"{out['thread_id']} {out['session_id']}")
    return 0


def _archiver(name: str, archived: bool) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        k = keeper(args)
        moved = k.archive(args.thread) if archived else k.unarchive(args.thread)
        emit({"thread_id": args.thread, "moved": moved}) if args.json else say(
            f"{name}d {args.thread} ({moved} file(s) moved)")
        return 0

    return run


def check_store(args: argparse.Namespace) -> int:
    """fsck: exit 0 when clean (or all of it repaired), 1 when problems remain."""
    report = keeper(args, reads_only=not args.repair).fsck(repair=args.repair)
    if args.json:
        emit(_fsck_data(report))
    else:
        _say_fsck(report, "")
        for agent, journal in report.journals.items():
            _say_fsck(journal, f"journals of {agent}: ")
    return 1 if report.problems_left else 0


def _fsck_data(report: FsckReport) -> dict[str, Any]:
    """A report as JSON: its fields, `clean`, and each journal store's report the same way."""
    data = dataclasses.asdict(report) | {"clean": report.clean}
    data["journals"] = {agent: _fsck_data(j) for agent, j in report.journals.items()}
    return data


def _say_fsck(report: FsckReport, where: str) -> None:
    """A report as text: what was checked, then each kind of problem (20 of each at most)."""
    say(f"{where}checked {report.checked} rollout(s): "
        f"{'clean' if report.clean else 'problems found'}")
    for key, value in dataclasses.asdict(report).items():
        if isinstance(value, list) and value:
            say(f"  {key}: {len(value)}")
            for item in value[:20]:
                say(f"    {item}")
    if report.repaired:
        say("  index rebuilt from the rollouts")


def reindex(args: argparse.Namespace) -> int:
    """Rebuild the index, with progress on a terminal."""
    counts = keeper(args).reindex(_progress(args))
    emit(counts) if args.json else say(
        f"indexed {counts['threads']} thread(s), {counts['sessions']} session(s); "
        f"{counts['unindexable']} file(s) unindexable (see fsck)")
    return 0


def _progress(args: argparse.Namespace) -> Callable[[int, int], None] | None:
    if args.json or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\rreindexing {done}/{total}")
        if done == total:
            sys.stderr.write("\n")

    return show


def sync_store(args: argparse.Namespace) -> int:
    """Push to the shared index: exit 0 when everything is there, 1 when some session is only in
    part (its problems listed)."""
    report = keeper(args).sync(thread_id=args.thread)
    if args.json:
        emit(dataclasses.asdict(report))
    else:
        say(f"pushed {report.records} record(s) of {report.sessions} session(s) and "
            f"{report.blobs} blob(s); {report.unchanged} session(s) already there")
        for problem in report.problems:
            say(f"  {problem}")
    return 1 if report.problems else 0


def schema(args: argparse.Namespace) -> int:
    """The JSON Schema of a rollout line, every field described."""
    from ..session.validate import json_schema

    emit(json_schema())
    return 0


def demo_story(args: argparse.Namespace) -> int:
    """The story the README's first command tells."""
    from ..demo import run_demo

    return run_demo(directory=args.dir, as_json=args.json)
