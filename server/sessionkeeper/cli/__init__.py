"""`sessionkeeper`: serve the language server (default), check resumes for CI, inspect the store.

Every command lives in one module of this package that adds its subparser (`add`) and the
function that runs it; `main` builds the parser and translates our typed errors to exit codes
in this one place.

Exit codes: 0 ok · 10 drift (`--check-resume`) · 11 blocked (`--check-resume`) · 1 fsck found
problems it did not repair · 2 usage · 64 invalid id or workspace · 65 invalid event · 66 unknown
thread · 73 read-only session · 74 store damaged or full · 75 thread busy · 70 internal error;
`rewind` exits 1 when a file was not handled as planned.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..errors import SessionKeeperError
from . import check, content, serve, store_commands
from .common import emit, parser_with

COMMANDS = (serve, store_commands, content)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sessionkeeper` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] in ("--stdio", "--tcp"):
        args_list = ["serve", *args_list]  # the default command (and what editors launch)
    parser = parser_with(COMMANDS, top=check.add_top)
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
