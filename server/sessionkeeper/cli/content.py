"""The content commands: diff, rewind (and --undo), trailer, git-hook install|uninstall, gc.

`rewind` exits 0 when every file was handled as planned and 1 when a file was refused, had no
content to restore, changed meanwhile (stale) or failed; typed errors keep their exit codes.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Collection
from typing import Any

from .common import COMMON, Parser, Subparsers, emit, keeper, say

CONTENT = Parser(add_help=False)
"""The parent parser of commands that read file content (start, record, rewind)."""
CONTENT.add_argument("--content-limit", type=lambda v: size(v), default=argparse.SUPPRESS,
                     metavar="SIZE", help="files larger than this are kept by hash only (10M)")
CONTENT.add_argument("--allow-secret-files", action="store_true", default=argparse.SUPPRESS,
                     help="keep the content of secret-named files (.env*, keys) too")

@functools.cache  # only a --content-limit or a --cap parses a size
def _size_pattern() -> re.Pattern[str]:
    return re.compile(r"(\d+)\s*([kmgt]?)i?b?", re.IGNORECASE)


def size(text: str) -> int:
    """A size such as 500M, 2G, 10MB or 4096 in bytes (K, M, G, T: powers of 1024)."""
    match = _size_pattern().fullmatch(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 500M, 2G, 4096)")
    return int(match[1]) * 1024 ** " KMGT".index((match[2] or " ").upper())


def add(sub: Subparsers, only: Collection[str] | None = None) -> None:
    """Add the content subcommands (all: `only` is not used here yet)."""
    diff = sub.add_parser("diff", parents=[COMMON], help="unified diffs of a thread's file changes")
    diff.add_argument("thread")
    diff.add_argument("--from", dest="from_seq", type=int, metavar="SEQ",
                      help="changes after this seq (default: from before the session)")
    diff.add_argument("--to", dest="to_seq", type=int, metavar="SEQ", help="up to this seq")
    diff.add_argument("--path", help="one file (workspace-relative)")
    diff.add_argument("--squash", action="store_true", help="one diff per file over the range")
    diff.set_defaults(run=show_diff)
    rewind = sub.add_parser("rewind", parents=[COMMON, CONTENT],
                            help="restore files to their versions at a seq (exit 1: not all)")
    rewind.add_argument("thread")
    which = rewind.add_mutually_exclusive_group(required=True)
    which.add_argument("--to", dest="to_seq", type=int, metavar="SEQ")
    which.add_argument("--undo", action="store_true", help="undo the latest rewind")
    rewind.add_argument("--path", dest="paths", action="append", metavar="P",
                        help="only this file (repeatable)")
    rewind.add_argument("--dry-run", action="store_true", help="list what would change")
    rewind.add_argument("--force", action="store_true",
                        help="also overwrite files changed outside the session (kept as blobs)")
    rewind.set_defaults(run=run_rewind)
    trailer = sub.add_parser("trailer", parents=[COMMON], help="commit trailers of a thread")
    trailer.add_argument("thread", nargs="?", help="default: the latest thread of this directory")
    trailer.add_argument("--coauthor", metavar="'NAME <EMAIL>'",
                         help="who to credit (default: $SESSIONKEEPER_COAUTHOR, else the agent)")
    trailer.add_argument("--hook", nargs="+", metavar="MSG", help=argparse.SUPPRESS)
    trailer.set_defaults(run=run_trailer)
    hook = sub.add_parser("git-hook", parents=[COMMON],
                          help="install or remove the prepare-commit-msg trailer hook")
    hook.add_argument("action", choices=["install", "uninstall"])
    hook.add_argument("--repo", default=".", metavar="DIR")
    hook.set_defaults(run=run_git_hook)
    gc = sub.add_parser("gc", parents=[COMMON], help="remove blobs no rollout needs")
    gc.add_argument("--cap", type=size, metavar="SIZE",
                    help="then evict least recently used blobs until the store fits SIZE")
    gc.add_argument("--dry-run", action="store_true", help="report, remove nothing")
    gc.set_defaults(run=run_gc)


def show_diff(args: argparse.Namespace) -> int:
    """Print the diffs (or their JSON), each headed with the seq and author of both sides."""
    from ..recovery.diff import as_dict, render

    diffs = keeper(args).diff(args.thread, from_seq=args.from_seq, to_seq=args.to_seq,
                              path=args.path, squash=args.squash)
    if args.json:
        emit([as_dict(d) for d in diffs])
    elif diffs:
        sys.stdout.write(render(diffs))
    else:
        say("no file changes in that range")
    return 0


def run_rewind(args: argparse.Namespace) -> int:
    """Plan (or carry out) a rewind and print each file's step."""
    report = keeper(args).rewind(args.thread, to_seq=args.to_seq, paths=args.paths,
                                 dry_run=args.dry_run, force=args.force, undo=args.undo)
    rows = report.steps()
    if args.json:
        emit({"thread_id": args.thread, "to_seq": report.plan.to_seq, "dry_run": args.dry_run,
              "rewind_seq": report.rewind_seq, "undo_of": report.undo_of,
              "finished_interrupted": report.finished, "undo_available": report.undo_available,
              "complete": report.complete, "steps": rows})
        return 0 if report.complete else 1
    if report.finished is not None:
        say(f"finished the interrupted rewind begun at seq {report.finished}")
    what = f"undo of the rewind at seq {report.undo_of}" if report.undo_of is not None \
        else f"rewind to seq {report.plan.to_seq}"
    say(f"{what}{' (dry run: nothing changed)' if args.dry_run else ''}")
    for row in rows:
        say(f"  {row['outcome'] or row['action']:<11} {row['path']}: {row['reason']}")
    if not rows:
        say("  no file of the session's history")
    if report.rewind_seq is not None and report.undo_available:
        say(f"undo with: sessionkeeper rewind {args.thread} --undo")
    return 0 if report.complete else 1


def run_trailer(args: argparse.Namespace) -> int:
    """Print a thread's trailers; as the git hook (`--hook MSG [SOURCE [SHA]]`), add them."""
    import os

    k = keeper(args)
    if args.hook:
        message, source = args.hook[0], (args.hook[1:2] or [""])[0]
        if source in ("merge", "squash"):
            return 0
        paths = k.trail_commit(message, workspace=os.getcwd(), thread_id=args.thread,
                               coauthor=args.coauthor)
        if args.json:
            emit({"agent_paths": list(paths)})
        return 0
    if args.thread is None:
        rows = k.rows(workspace=os.getcwd(), limit=1)
        if not rows:
            from ..errors import UnknownThread

            raise UnknownThread(f"no thread recorded for {os.getcwd()}")
        args.thread = rows[0].thread_id
    trailers = k.trailers(args.thread, coauthor=args.coauthor)
    if args.json:
        emit({"thread_id": args.thread, "trailers": list(trailers)})
    else:
        for line in trailers:
            say(line)
    return 0


def run_git_hook(args: argparse.Namespace) -> int:
    """Install or remove the hooks in a repository (idempotent; another hook is kept)."""
    from ..recovery import git_hook

    if args.action == "install":
        store = str(keeper(args).store.layout.root)
        command = [sys.executable, "-m", "sessionkeeper", "--store", store, "trailer", "--hook"]
        done = git_hook.install(args.repo, command=command)
    else:
        done = git_hook.uninstall(args.repo)
    if args.json:
        emit({"action": args.action, "done": done})
    else:
        for line in done or ["nothing to do"]:
            say(line)
    return 0


def run_gc(args: argparse.Namespace) -> int:
    """Collect blobs: unreferenced ones, then over the cap the least recently used unprotected ones."""
    import dataclasses

    report = keeper(args).gc(cap_bytes=args.cap, dry_run=args.dry_run)
    data: dict[str, Any] = dataclasses.asdict(report) | {"dry_run": args.dry_run}
    if args.json:
        emit(data)
        return 0
    verb = "would remove" if args.dry_run else "removed"
    say(f"{verb} {len(report.removed)} unreferenced blob(s) and {len(report.expired)} over the cap "
        f"({report.freed_bytes} bytes); {report.stored_bytes} bytes of blobs kept")
    if report.over_cap:
        say("still over the cap: the rest is what live threads need")
    return 0
