"""`sessionkeeper resume`: check a thread, then continue it — an agent's thread through the agent.

For a Codex or Claude Code thread the check runs first; then the agent's own command
(`codex resume <id>`, `claude --resume <id>`, or its fork command) is printed, or with `--exec`
run in the checked workspace (this process becomes the agent). Nothing runs on `blocked`, nor on
`drift` without a decision. A thread of ours is resumed as the Python API does (a new session,
closed again: the next `record --session` continues it).

Exit codes: 0 continued (or the command given, or `cancel` decided) · 10 drift without a
decision · 11 blocked · 127 the agent's command was not found (`--exec`) · typed errors as usual.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Collection
from typing import TYPE_CHECKING

from ..recovery.verdicts import DECISIONS
from .check import EXIT
from .common import AGENT_OPTIONS, COMMON, Subparsers, emit, import_progress, keeper, say

if TYPE_CHECKING:
    from ..recovery.report import AgentCommand, Report


def add(sub: Subparsers, only: Collection[str] | None = None) -> None:
    """Add `resume` (`only`: unused, it is the one command here)."""
    resume = sub.add_parser("resume", parents=[COMMON, AGENT_OPTIONS],
                            help="check a thread, then continue it (an agent's thread: print or "
                                 "run the agent's own resume command)")
    resume.add_argument("thread", help="a thread id (for Codex / Claude Code: the agent's session id)")
    resume.add_argument("--workspace", default=None, help="where to resume (default: cwd)")
    resume.add_argument("--decision", choices=[d for d in DECISIONS if d != "switch_back"],
                        help="what to do about drift (or a block: relocate, fork, export)")
    resume.add_argument("--exec", action="store_true",
                        help="run the agent's command in the workspace instead of printing it")
    resume.set_defaults(run=resume_thread)


def resume_thread(args: argparse.Namespace) -> int:
    """Check, then continue: print (or exec) an agent's command, or resume a thread of ours."""
    from ..render import colour_enabled, report_text

    workspace = os.path.realpath(args.workspace or os.getcwd())
    k = keeper(args, agents=True)
    k.import_agents(import_progress())
    command: AgentCommand | None = None
    if k.is_agent_thread(args.thread):
        report, command = k.resume_agent(args.thread, workspace=workspace, decision=args.decision)
    else:
        report, session = k.resume(args.thread, workspace=workspace, decision=args.decision)
        if session is not None:
            session.close()
    if args.json:
        emit({"report": report.to_json(), "command": command})
    else:
        say(report_text(report, colour=colour_enabled()))
        if command is not None and not args.exec:
            say(f"\nresume with:  cd {_quoted(command.cwd)} && {command.display}")
    if command is not None and args.exec:
        return _exec(command)
    return _code(report, command)


def _code(report: Report, command: AgentCommand | None) -> int:
    if command is not None or report.continued or report.export_path or report.decision == "cancel":
        return 0
    return EXIT[report.verdict] or EXIT["drift"]  # ok with nothing continued: a decision stopped it


def _quoted(path: str) -> str:
    import shlex

    return shlex.quote(path)


def _exec(command: AgentCommand) -> int:
    """Become the agent's command in its cwd; 127 (with a message) when it cannot be run."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.chdir(command.cwd)
        os.execvp(command.argv[0], command.argv)
    except OSError as exc:
        print(f"sessionkeeper: cannot run {command.display!r} in {command.cwd}: "
              f"{exc.strerror or exc}", file=sys.stderr)
        return 127
    return 0  # not reached: execvp replaced this process
