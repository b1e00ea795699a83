"""What every command shares: the parser skeleton with --store/--json, output, the Keeper."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Collection, Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from ..agents.importer import AgentSources
    from ..api import Keeper

Subparsers = Any  # argparse's _SubParsersAction (private)


def say(text: str) -> None:
    """Print a line to stdout; a reader that went away (`| head`) changes no exit code."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit


def emit(data: Any) -> None:
    """Print JSON (dataclasses included) to stdout."""
    say(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())


def keeper(args: argparse.Namespace, *, reads_only: bool = False,
           agents: bool = False) -> Keeper:
    """The Keeper of the store the command names (with the agents' logs as threads: `agents`).

    A command that only reads opens a store it was pointed at (--store, $SESSIONKEEPER_HOME)
    read-only: nothing is created or changed there (e.g. a store committed to a repository and
    checked in CI). The per-user default store is a cache of ours and may be brought up to date.
    """
    from ..api import Keeper

    return Keeper(args.store, **_settings(args, reads_only=reads_only, agents=agents))


def reader(args: argparse.Namespace) -> Keeper:
    """`keeper(args, reads_only=True, agents=True)`: what `list`, `show` and `--check-resume`
    read with (the content actions and fsck they never call load nothing until called)."""
    return keeper(args, reads_only=True, agents=True)


def _settings(args: argparse.Namespace, *, reads_only: bool, agents: bool) -> dict[str, Any]:
    """The Keeper's settings a command line gives (see `keeper`)."""
    from ..store.layout import ENV_HOME

    settings: dict[str, Any] = {}
    if getattr(args, "content_limit", None) is not None:
        settings["content_limit_bytes"] = args.content_limit
    if getattr(args, "allow_secret_files", False):
        settings["allow_secret_files"] = True
    pointed = args.store is not None or bool(os.environ.get(ENV_HOME))
    shared = shared_index(args)
    if shared:  # a store sharing sessions takes in what it pulls: never opened read-only
        settings["shared_index"] = shared
    return {"durability": getattr(args, "durability", "written"),
            "read_only": reads_only and pointed and not shared,
            "agents": sources(args) if agents else None, **settings}


ENV_INDEX = "SESSIONKEEPER_INDEX"
"""A postgresql:// URL of the shared index (`--index`), for commands that share sessions."""


def shared_index(args: argparse.Namespace) -> str | None:
    """The shared index the command line (`--index`) or $SESSIONKEEPER_INDEX names (None: none;
    `--index local`: none, whatever the environment says)."""
    raw = getattr(args, "index", None)
    if raw is None:
        raw = os.environ.get(ENV_INDEX) or None
    if raw is None or raw.strip() in ("", "local"):
        return None
    from ..store.index.pg_url import checked

    return checked(raw)


def sources(args: argparse.Namespace) -> AgentSources | None:
    """The agent sources `--agents` and `--<agent>-home` name (None: none)."""
    from ..agents.importer import AgentSources

    raw = getattr(args, "agents", None)
    wanted = None if raw in (None, "") else tuple(a.strip() for a in raw.split(",") if a.strip())
    if wanted == ("none",):
        return None
    roots = {name: tuple(r for r in value.split(",") if r) for name, value in
             (("codex", getattr(args, "codex_home", None)),
              ("claude", getattr(args, "claude_home", None)),
              ("hermes", getattr(args, "hermes_home", None)),
              ("openclaw", getattr(args, "openclaw_home", None))) if value}
    return AgentSources(agents=wanted, roots=roots)


class Parser(argparse.ArgumentParser):
    """argparse's parser, formatting help as wide as argparse would, measured without `shutil`
    (argparse imports it, with bz2 and lzma, to measure the terminal for every argument added:
    ~2 ms of a command's start)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


def _columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        size = os.get_terminal_size(sys.__stdout__.fileno()) if sys.__stdout__ else None
    except (AttributeError, ValueError, OSError):
        size = None
    return size.columns if size and size.columns else 80


def _agent_options(*, top: bool) -> argparse.ArgumentParser:
    """--agents, --codex-home, --claude-home: which agents' own logs are read, from where."""
    options = Parser(add_help=False)
    unset: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    options.add_argument("--agents", metavar="none|codex,claude,hermes,openclaw", **unset,
                         help="agents whose own session logs are listed (default: all)")
    options.add_argument("--codex-home", metavar="DIR", **unset,
                         help="Codex's home to read (default: $CODEX_HOME, else ~/.codex)")
    options.add_argument("--claude-home", metavar="DIR", **unset,
                         help="Claude Code's config dir to read (default: $CLAUDE_CONFIG_DIR, "
                              "else ~/.claude)")
    options.add_argument("--hermes-home", metavar="DIR", **unset,
                         help="Hermes Agent's home to read (default: $HERMES_HOME, else ~/.hermes)")
    options.add_argument("--openclaw-home", metavar="DIR", **unset,
                         help="OpenClaw's state dir to read (default: $OPENCLAW_STATE_DIR, "
                              "else ~/.openclaw)")
    return options


PROGRESS_MIN = 50
"""An import reading at least this many files shows a progress bar (on a terminal)."""


def import_progress() -> Callable[[int, int], None] | None:
    """A tqdm progress bar for a large agent import, on a terminal only (stderr); else None."""
    if not sys.stderr.isatty():
        return None
    bars: list[Any] = []

    def show(done: int, total: int) -> None:
        if total < PROGRESS_MIN:
            return
        if not bars:
            from tqdm import tqdm  # type: ignore[import-untyped]

            bars.append(tqdm(total=total, desc="importing agent sessions", unit="file",
                             file=sys.stderr, leave=False))
        bars[0].update(done - bars[0].n)
        if done >= total:
            bars[0].close()

    return show


AGENT_OPTIONS = _agent_options(top=False)
"""The parent parser of commands that list or check threads of the agents too."""
TOP_AGENT_OPTIONS = _agent_options(top=True)


def _common(*, top: bool) -> argparse.ArgumentParser:
    """--store and --json, accepted before and after the subcommand (a subcommand's unset
    option must not overwrite the top level's, hence SUPPRESS there)."""
    common = Parser(add_help=False)
    unset: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    common.add_argument("--store", **unset,
                        help="store directory (default: $SESSIONKEEPER_HOME or the per-user data dir)")
    common.add_argument("--json", action="store_true", **unset, help="machine-readable output")
    common.add_argument("--index", metavar="URL", **unset,
                        help="a shared index: postgresql://user@host/db (default: "
                             "$SESSIONKEEPER_INDEX; `local`: none)")
    return common


COMMON = _common(top=False)
"""The parent parser every subcommand takes (`parents=[COMMON]`)."""


def parser_with(modules: Iterable[ModuleType], *,
                top: Callable[[argparse.ArgumentParser], None],
                only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole CLI: top-level options, then each module's subcommands (those in `only`)."""
    parser = Parser(prog="sessionkeeper", parents=[_common(top=True), TOP_AGENT_OPTIONS],
                    description="Session recovery for editor AI agents.",
                    allow_abbrev=False)  # `list --all` is not `--allow-drift`
    top(parser)
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for module in modules:
        module.add(sub, only)
    return parser
