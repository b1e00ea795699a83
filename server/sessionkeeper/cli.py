"""`sessionkeeper`: serve the language server (default), check resumes for CI, inspect the store.

Exit codes: 0 ok · 10 drift (`--check-resume`) · 11 blocked (`--check-resume`) · 2 usage ·
64 invalid id or workspace · 65 invalid event · 66 unknown thread · 73 read-only session · 74 store damaged /
full · 75 thread busy · 70 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import orjson

from .errors import SessionKeeperError

EXIT = {"ok": 0, "drift": 10, "blocked": 11}


def _emit(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


def _keeper(args: argparse.Namespace) -> Any:
    from .api import Keeper

    return Keeper(args.store, durability=getattr(args, "durability", "written"))


def _common(*, top: bool) -> argparse.ArgumentParser:
    """--store and --json, accepted before and after the subcommand (a subcommand's unset
    option must not overwrite the top level's, hence SUPPRESS there)."""
    common = argparse.ArgumentParser(add_help=False)
    unset: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    common.add_argument("--store", **unset,
                        help="store directory (default: $SESSIONKEEPER_HOME or the per-user data dir)")
    common.add_argument("--json", action="store_true", **unset, help="machine-readable output")
    return common


def _parser() -> argparse.ArgumentParser:
    common = _common(top=False)
    parser = argparse.ArgumentParser(prog="sessionkeeper", parents=[_common(top=True)],
                                     description="Session recovery for editor AI agents.")
    parser.add_argument("--check-resume", nargs="?", const="", metavar="THREAD",
                        help="check whether THREAD (or --latest) would resume here; changes nothing")
    parser.add_argument("--latest", action="store_true",
                        help="with --check-resume: the workspace's newest thread")
    parser.add_argument("--workspace", default=None, help="with --check-resume: the workspace (default: cwd)")
    parser.add_argument("--allow-drift", action="store_true", help="with --check-resume: exit 0 on drift")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", parents=[common], help="language server on stdio (default)")
    serve.add_argument("--stdio", action="store_true")
    serve.add_argument("--tcp", metavar="HOST:PORT")
    start = sub.add_parser("start", parents=[common], help="start a thread; prints its ids")
    start.add_argument("--workspace", required=True)
    start.add_argument("--title")
    start.add_argument("--model")
    start.add_argument("--approval-mode", default="on-request")
    start.add_argument("--sandbox-policy", default="workspace-write")
    start.add_argument("--tool-profile", default="default")
    record = sub.add_parser("record", parents=[common], help="append JSON-lines events from stdin")
    record.add_argument("--session", required=True)
    record.add_argument("--durability", choices=["none", "written", "durable"], default="written")
    lst = sub.add_parser("list", parents=[common], help="threads, newest first")
    lst.add_argument("--workspace")
    lst.add_argument("--all", action="store_true", help="include archived threads")
    lst.add_argument("--limit", type=int, default=50)
    show = sub.add_parser("show", parents=[common], help="a thread's sessions and state")
    show.add_argument("thread")
    fork = sub.add_parser("fork", parents=[common], help="fork a thread at a seq")
    fork.add_argument("thread")
    fork.add_argument("--at", type=int, default=None, metavar="SEQ")
    fork.add_argument("--workspace")
    for name in ("archive", "unarchive"):
        sub.add_parser(name, parents=[common], help=f"{name} a thread").add_argument("thread")
    fsck = sub.add_parser("fsck", parents=[common], help="compare the index with the rollouts")
    fsck.add_argument("--repair", action="store_true")
    sub.add_parser("reindex", parents=[common], help="rebuild the index from the rollouts")
    sub.add_parser("schema", parents=[common], help="print the JSON Schema of a rollout line")
    demo = sub.add_parser("demo", parents=[common], help="the whole story in a scratch directory")
    demo.add_argument("--dir", help="scratch directory (default: a new temp dir, kept)")
    return parser


def check_resume(args: argparse.Namespace) -> int:
    """Headless resume check for CI: human summary, --json, GitHub annotations; exit per verdict."""
    from .render import colour_enabled, report_text

    workspace = args.workspace or os.getcwd()
    thread = args.check_resume or None
    if thread is None and not args.latest:
        _parser().error("--check-resume needs a THREAD or --latest")
    report = _keeper(args).check_resume(thread, workspace=workspace, latest=args.latest).to_json()
    if args.json:
        _emit(report)
    else:
        print(report_text(report, colour=colour_enabled()))
    if os.environ.get("GITHUB_ACTIONS"):
        _annotate(report)
    code = EXIT[report["verdict"]]
    return 0 if code == EXIT["drift"] and args.allow_drift else code


def _annotate(report: dict[str, Any]) -> None:
    level = {"ok": "notice", "drift": "warning", "blocked": "error"}[report["verdict"]]
    diffs = "; ".join(f"{d['kind']}: {d['recorded']} -> {d['current']}" for d in report["differences"])
    print(f"::{level} title=Session Keeper resume {report['verdict']}::thread "
          f"{report['thread_id']} {diffs or 'environment identical'}")


def _run(args: argparse.Namespace) -> int:
    command = args.command
    if command == "start":
        session = _keeper(args).start(args.workspace, title=args.title, model=args.model,
                                      permissions={"approval_mode": args.approval_mode,
                                                   "sandbox_policy": args.sandbox_policy,
                                                   "tool_profile": args.tool_profile})
        out = {"thread_id": session.thread_id, "session_id": session.session_id,
               "path": session.path}
        session.close()
        _emit(out) if args.json else print(f"{out['thread_id']} {out['session_id']}")
        return 0
    if command == "record":
        return _record(args)
    if command == "schema":
        from .events import json_schema

        _emit(json_schema())
        return 0
    if command == "demo":
        from .demo import run_demo

        return run_demo(directory=args.dir, as_json=args.json)
    keeper = _keeper(args)
    if command == "list":
        from .render import threads_text

        rows = keeper.threads(workspace=args.workspace, include_archived=args.all,
                              limit=args.limit)
        _emit(rows) if args.json else print(threads_text(rows))
    elif command == "show":
        _show(keeper, args)
    elif command == "fork":
        session = keeper.fork(args.thread, at_seq=args.at, workspace=args.workspace)
        out = {"thread_id": session.thread_id, "session_id": session.session_id}
        session.close()
        _emit(out) if args.json else print(f"{out['thread_id']} {out['session_id']}")
    elif command in ("archive", "unarchive"):
        moved = getattr(keeper, command)(args.thread)
        _emit({"thread_id": args.thread, "moved": moved}) if args.json else print(
            f"{command}d {args.thread} ({moved} file(s) moved)")
    elif command == "fsck":
        return _fsck(keeper, args)
    elif command == "reindex":
        counts = keeper.reindex(_progress(args))
        _emit(counts) if args.json else print(
            f"indexed {counts['threads']} thread(s), {counts['sessions']} session(s); "
            f"{counts['unindexable']} file(s) unindexable (see fsck)")
    return 0


def _progress(args: argparse.Namespace) -> Any:
    if args.json or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\rreindexing {done}/{total}")
        if done == total:
            sys.stderr.write("\n")

    return show


def _record(args: argparse.Namespace) -> int:
    from .errors import InvalidEvent

    session = _keeper(args).attach(args.session)
    code = 0
    try:
        for number, line in enumerate(sys.stdin, start=1):
            if not line.strip():
                continue
            try:
                ack = session.record(orjson.loads(line), durability=args.durability)
                out = {"line": number, "seq": ack.seq, "durability": ack.durability.value,
                       "duplicate": ack.duplicate}
            except (orjson.JSONDecodeError, InvalidEvent) as exc:
                out, code = {"line": number, "error": "invalid_event", "message": str(exc)}, 65
            sys.stdout.write(orjson.dumps(out).decode() + "\n")
            sys.stdout.flush()
    finally:
        session.close()
    return code


def _show(keeper: Any, args: argparse.Namespace) -> None:
    from .render import report_text

    rows = keeper.store.thread_sessions(args.thread)
    report = keeper.check_resume(args.thread, workspace=rows[-1]["cwd"] or os.getcwd()).to_json()
    if args.json:
        _emit({"sessions": rows, "state": report})
        return
    print(f"thread {args.thread}: {len(rows)} session(s)")
    for r in rows:
        print(f"  {r['session_id']}  {r['source']:<8} seq ≤{r['last_seq']:<6} {r['path']}")
    print()
    print(report_text(report))


def _fsck(keeper: Any, args: argparse.Namespace) -> int:
    import dataclasses

    report = keeper.fsck(repair=args.repair)
    data = dataclasses.asdict(report) | {"clean": report.clean}
    if args.json:
        _emit(data)
    else:
        print(f"checked {report.checked} rollout(s): {'clean' if report.clean else 'problems found'}")
        for key, value in data.items():
            if isinstance(value, list) and value:
                print(f"  {key}: {len(value)}")
                for item in value[:20]:
                    print(f"    {item}")
        if report.repaired:
            print("index rebuilt from the rollouts")
    return 0 if report.clean or report.repaired else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sessionkeeper` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("serve", "--stdio", "--tcp"):
        from .lsp.server import serve

        return serve(argv[1:] if argv and argv[0] == "serve" else argv) or 0
    args = _parser().parse_args(argv)
    try:
        if args.check_resume is not None:
            return check_resume(args)
        if args.command is None:
            _parser().print_help()
            return 2
        if args.command == "serve":  # `sessionkeeper --store DIR serve`
            from .lsp.server import serve

            forwarded = (["--store", args.store] if args.store else []) + (
                ["--tcp", args.tcp] if args.tcp else [])
            return serve(forwarded) or 0
        return _run(args)
    except SessionKeeperError as exc:
        if getattr(args, "json", False):
            _emit(exc.to_dict())
        print(f"sessionkeeper: {exc.name}: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
