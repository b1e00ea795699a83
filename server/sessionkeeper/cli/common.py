"""What every command shares: the parser skeleton with --store/--json, output, the Keeper."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
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


def keeper(args: argparse.Namespace, *, reads_only: bool = False) -> Keeper:
    """The Keeper of the store the command names.

    A command that only reads opens a store it was pointed at (--store, $SESSIONKEEPER_HOME)
    read-only: nothing is created or changed there (e.g. a store committed to a repository and
    checked in CI). The per-user default store is a cache of ours and may be brought up to date.
    """
    from ..api import Keeper
    from ..store.layout import ENV_HOME

    content: dict[str, Any] = {}
    if getattr(args, "content_limit", None) is not None:
        content["content_limit_bytes"] = args.content_limit
    if getattr(args, "allow_secret_files", False):
        content["allow_secret_files"] = True
    pointed = args.store is not None or bool(os.environ.get(ENV_HOME))
    return Keeper(args.store, durability=getattr(args, "durability", "written"),
                  read_only=reads_only and pointed, **content)


def _common(*, top: bool) -> argparse.ArgumentParser:
    """--store and --json, accepted before and after the subcommand (a subcommand's unset
    option must not overwrite the top level's, hence SUPPRESS there)."""
    common = argparse.ArgumentParser(add_help=False)
    unset: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    common.add_argument("--store", **unset,
                        help="store directory (default: $SESSIONKEEPER_HOME or the per-user data dir)")
    common.add_argument("--json", action="store_true", **unset, help="machine-readable output")
    return common


COMMON = _common(top=False)
"""The parent parser every subcommand takes (`parents=[COMMON]`)."""


def parser_with(modules: Iterable[ModuleType], *,
                top: Callable[[argparse.ArgumentParser], None]) -> argparse.ArgumentParser:
    """The whole CLI: top-level options, then each module's subcommands."""
    parser = argparse.ArgumentParser(prog="sessionkeeper", parents=[_common(top=True)],
                                     description="Session recovery for editor AI agents.",
                                     allow_abbrev=False)  # `list --all` is not `--allow-drift`
    top(parser)
    sub = parser.add_subparsers(dest="command")
    for module in modules:
        module.add(sub)
    return parser
