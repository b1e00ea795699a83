"""`sessionkeeper hook` (what the agents run) and `sessionkeeper hooks install|uninstall|status|
policy|ack` (what the user and the editor's "Connect agents…" run).

`hook` never reaches argparse: `cli.main` hands its argv to `hooks.entry` first, so a bad call
still exits 0 (argparse's exit 2 would be a blocking error to Claude Code) and the start stays
fast. The parser entry below only documents it in `--help`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from .common import COMMON, Subparsers, emit, say

_AGENTS = ("claude", "codex", "all")


def add(sub: Subparsers, only: Collection[str] | None = None) -> None:
    """Add `hook` and `hooks` (both: `only` is for modules of many commands)."""
    hook = sub.add_parser("hook", parents=[COMMON],
                          help="answer an agent's hook (the agents run this; reads JSON on stdin)")
    hook.add_argument("agent", choices=["claude", "codex", "hermes"])
    hook.add_argument("event")
    hooks = sub.add_parser("hooks", help="connect the agents: install, uninstall, status, policy, ack")
    verbs = hooks.add_subparsers(dest="verb", required=True)
    for name, run, text in (("install", install, "merge our hooks into the agents' config"),
                            ("uninstall", uninstall, "take our hooks out again (restores the files)"),
                            ("status", status, "installed? trusted? when did they last run?")):
        cmd = verbs.add_parser(name, parents=[COMMON], help=text)
        cmd.add_argument("--agent", choices=_AGENTS, default="all",
                         help="which agent (all: the agents found on this machine)")
        cmd.add_argument("--scope", choices=["user", "project"], default="user")
        cmd.add_argument("--config-dir", help="the agent's config dir (default: $CLAUDE_CONFIG_DIR / "
                                              "$CODEX_HOME, else ~/.claude / ~/.codex)")
        cmd.add_argument("--project", help="with --scope project: the project (default: cwd)")
        if name == "install":
            cmd.add_argument("--no-trust", action="store_true",
                             help="Codex: leave our hooks untrusted (review them in Codex's /hooks)")
            cmd.add_argument("--no-mcp", action="store_true",
                             help="do not register the `sessionkeeper mcp` server the model can ask")
        cmd.set_defaults(run=run)
    pol = verbs.add_parser("policy", parents=[COMMON],
                           help="show or set the hook policy: warn (default), block-on-drift, off")
    pol.add_argument("value", nargs="?", choices=["warn", "block-on-drift", "off"])
    where = pol.add_mutually_exclusive_group()
    where.add_argument("--repo", help="set it for this repository only (git config --local)")
    where.add_argument("--user", action="store_true", help="set it for the user (git config --global)")
    pol.set_defaults(run=policy)
    ack = verbs.add_parser("ack", parents=[COMMON],
                           help="let a resume the hooks stopped or gated continue once")
    ack.add_argument("agent", choices=["claude", "codex"])
    ack.add_argument("session_id")
    ack.set_defaults(run=acknowledge)


def _store_root(args: argparse.Namespace) -> Path:
    from ..store.layout import Layout

    return Layout(args.store).root


def _targets(args: argparse.Namespace) -> list[Any]:
    from ..hooks.install import found, target

    if args.config_dir and args.agent == "all":
        from ..errors import InvalidWorkspace

        raise InvalidWorkspace("--config-dir names one agent's directory: give --agent too")
    agents = [a for a in ("claude", "codex") if found(a)] if args.agent == "all" else [args.agent]
    return [target(a, scope=args.scope, config_dir=args.config_dir, project=args.project)
            for a in agents]


def install(args: argparse.Namespace) -> int:
    """Install the hooks for each agent; print what changed (or JSON with each agent's status)."""
    from ..hooks import install as setup

    root = _store_root(args)
    store = str(root) if args.store else None
    out = []
    for where in _targets(args):
        done = setup.install(where, store_root=root, store=store, trust=not args.no_trust,
                             mcp=not args.no_mcp)
        out.append({**done.to_json(), "status": setup.status(where, store_root=root)})
    if args.json:
        emit({"agents": out})
        return 0
    if not out:
        say("no agent found (give --agent claude or --agent codex)")
    for item in out:
        say(f"{item['agent']} ({item['scope']}):")
        for line in item["done"] + [f"note: {n}" for n in item["notes"] + item["status"]["notes"]]:
            say(f"  {line}")
        if item["backup"]:
            say(f"  backup: {item['backup']} (sessionkeeper hooks uninstall restores it)")
    return 0


def uninstall(args: argparse.Namespace) -> int:
    """Take the hooks out for each agent; print what was restored."""
    from ..hooks import install as setup

    root = _store_root(args)
    out = [setup.uninstall(where, store_root=root).to_json() for where in _targets(args)]
    if args.json:
        emit({"agents": out})
        return 0
    for item in out:
        say(f"{item['agent']} ({item['scope']}):")
        for line in item["done"]:
            say(f"  {line}")
    return 0


def status(args: argparse.Namespace) -> int:
    """Per agent: found, installed (per event), trusted, last run, notes."""
    from ..hooks import install as setup
    from ..hooks.install import target

    root = _store_root(args)
    agents = ["claude", "codex"] if args.agent == "all" else [args.agent]
    rows = [setup.status(target(a, scope=args.scope, config_dir=args.config_dir,
                                project=args.project), store_root=root) for a in agents]
    if args.json:
        emit({"agents": rows})
        return 0
    for row in rows:
        trusted = {None: "n/a (Claude Code has no hook trust)", True: "yes", False: "NO"}[row["trusted"]]
        last = row["last_run"]
        say(f"{row['agent']} ({row['scope']}): {'installed' if row['installed'] else 'not installed'}"
            f" in {row['hooks_file']}" + ("" if row["found"] else " (agent not found here)"))
        missing = [e for e, v in row["events"].items() if v != "installed"]
        if row["installed"] or len(missing) < len(row["events"]):
            say(f"  trusted: {trusted}")
        if missing and len(missing) < len(row["events"]):
            say(f"  missing events: {', '.join(missing)}")
        say(f"  last ran: {last['at']} {last['event']} ({last['outcome']})" if last
            else "  last ran: never")
        server = row["mcp"]
        say(f"  MCP server: {'registered' if server['registered'] else 'not registered'} in "
            f"{server['file']}" + (f" ({server['command']})" if server.get("command") else ""))
        if row["last_failure"]:
            fail = row["last_failure"]
            say(f"  last failure: {fail['at']} {fail['event']}: {fail.get('note') or ''}")
        for note in row["notes"]:
            say(f"  note: {note}")
    return 0


def policy(args: argparse.Namespace) -> int:
    """Show the policy in force here (or for --repo), or set it for a repository or the user."""
    from ..hooks.policy import policy_for, set_policy

    if args.value is not None:
        if not args.repo and not args.user:
            from ..errors import InvalidWorkspace

            raise InvalidWorkspace("say where: --repo DIR (this repository) or --user (everywhere)")
        where = set_policy(args.value, repo=args.repo)
        say(f"hook policy {args.value} ({where})")
        return 0
    setting = policy_for(os.path.realpath(args.repo or os.getcwd()))
    if args.json:
        emit({"policy": setting.policy, "source": setting.source, "note": setting.note})
    else:
        say(f"hook policy {setting.policy} (from {setting.source})"
            + (f"\nnote: {setting.note}" if setting.note else ""))
    return 0


def acknowledge(args: argparse.Namespace) -> int:
    """Lift the gate of a session (Claude) or let its next resume through once (Codex)."""
    from ..hooks.payload import session_id_of
    from ..hooks.state import acknowledge as ack

    text = ack(_store_root(args), args.agent, session_id_of(args.session_id))
    if args.json:
        emit({"agent": args.agent, "session_id": args.session_id, "done": text})
    else:
        say(text)
    return 0
