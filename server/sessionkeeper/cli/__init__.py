"""`sessionkeeper`: serve the language server (default), check resumes for CI, inspect the store.

Every command lives in one module of this package that adds its subparser (`add`) and the
function that runs it; `main` builds the parser and translates our typed errors to exit codes
in this one place. A command line naming a command loads only that command's module
(`COMMANDS`; a test keeps the table equal to what the modules add) and adds only that command's
parser, one naming none loads and adds all.

Exit codes: 0 ok · 10 drift (`--check-resume`) · 11 blocked (`--check-resume`) · 1 fsck found
problems it did not repair · 2 usage · 64 invalid id or workspace · 65 invalid event · 66 unknown
thread · 73 read-only session · 74 store damaged or full · 75 thread or index busy · 70 internal
error; `rewind` exits 1 when a file was not handled as planned.

The top layer beside `mcp`: it may import any part of the package.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # a tool hook's process starts here: nothing more than sys is loaded
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

MODULES = ("serve", "store_commands", "content", "agents", "hooks", "mcp")
"""The modules that add subcommands, in the order `--help` lists them."""
COMMANDS = {
    "serve": "serve",
    **dict.fromkeys(("start", "record", "list", "show", "fork", "archive", "unarchive", "fsck",
                     "reindex", "sync", "schema", "demo"), "store_commands"),
    **dict.fromkeys(("diff", "rewind", "trailer", "git-hook", "gc"), "content"),
    "resume": "agents",
    **dict.fromkeys(("hook", "hooks"), "hooks"),
    "mcp": "mcp",
}
"""Each subcommand and the module that adds it."""
RELAYED = frozenset(("list", "show", "start"))
"""The subcommands the editor's resident reader may answer (`relay`), beside a bare
`--check-resume`: the reads, and the start a harness runs before each agent."""


def named_commands(args: Sequence[str]) -> set[str]:
    """The subcommands a command line names (none: a bare `--check-resume`, a typo, no command)."""
    return {arg for arg in args if arg in COMMANDS}


def command_modules(args: Sequence[str]) -> list[ModuleType]:
    """The modules a command line needs: its command's, none for a bare `--check-resume`, or all."""
    named = {COMMANDS[arg] for arg in named_commands(args)}
    if not named and "--check-resume" in args and not {"-h", "--help"} & set(args):
        return []
    wanted = [name for name in MODULES if name in named] if named else list(MODULES)
    import importlib

    return [importlib.import_module(f"{__name__}.{name}") for name in wanted]


def _relayable(args: list[str]) -> bool:
    """True for `list`, `show`, `start` or a bare `--check-resume` (what a resident may answer)."""
    named = named_commands(args)
    return named <= RELAYED if named else "--check-resume" in args


_AT_EXIT: list[object] = []


def _no_collection_at_exit() -> None:
    """End a command's process without the interpreter's final collections: `gc.freeze()` at exit
    makes them skip every object (the OS frees the memory; ~9 ms of a listing's 110 here). Files
    and sessions are closed where they are used, never by a collection; stdout and stderr are
    flushed all the same. Not for the server: its exit is not waited for."""
    import atexit
    import gc

    if not _AT_EXIT:  # once per process
        _AT_EXIT.append(gc.freeze)
        atexit.register(gc.freeze)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sessionkeeper` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if argv is None and _relayable(args_list):  # the process a user started: maybe a resident's
        from .relay import relayed

        code = relayed(args_list)
        if code is not None:
            return code
    if args_list[:1] == ["hook"]:  # an agent's hook: a fast start, and never argparse's exit 2
        from ..hooks.payload import TOOL_EVENTS

        _no_collection_at_exit()
        if args_list[-1:] and (args_list[-1] in TOOL_EVENTS  # every tool call: the thin hook
                               or args_list[-1] == "SessionStart"):  # and a resume it can prove
            from ..hooks.fast import main as tool_hook

            return tool_hook(args_list[1:])
    from .. import with_site

    with_site()  # started as the hooks are (`python -S`), anything else needs site-packages
    if args_list[:1] == ["hook"]:
        from ..hooks.entry import main as hook

        return hook(args_list[1:])
    from . import check
    from .common import emit, parser_with

    if not args_list or args_list[0] in ("--stdio", "--tcp"):
        args_list = ["serve", *args_list]  # the default command (and what editors launch)
    if args_list[0] != "serve":
        _no_collection_at_exit()
    from ..errors import SessionKeeperError

    parser = parser_with(command_modules(args_list), top=check.add_top,
                         only=named_commands(args_list) or None)
    args = parser.parse_args(args_list)
    try:
        if args.check_resume is not None:
            return check.run(args, parser)
        if getattr(args, "run", None) is None:
            parser.print_help()
            return 2
        return int(args.run(args) or 0)
    except SessionKeeperError as exc:
        if getattr(args, "json", False):
            emit(exc.to_dict())
        print(f"sessionkeeper: {exc.name}: {exc}", file=sys.stderr)
        return exc.exit_code
