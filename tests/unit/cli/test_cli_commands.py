"""The lazy command table of the CLI: equal to what the command modules add."""

from __future__ import annotations

import argparse
import importlib

import pytest

from sessionkeeper.cli import COMMANDS, MODULES, command_modules, named_commands
from sessionkeeper.cli.check import add_top
from sessionkeeper.cli.common import parser_with


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_the_command_table_names_every_subcommand_and_the_module_that_adds_it() -> None:
    """Fixture: none — each module's parser built alone."""
    added = {}
    for name in MODULES:
        module = importlib.import_module(f"sessionkeeper.cli.{name}")
        for command in _subcommands(parser_with([module], top=add_top)):
            added[command] = name
    assert added == COMMANDS


def test_a_command_line_loads_only_its_commands_module() -> None:
    """Fixture: none."""
    assert [m.__name__ for m in command_modules(["--store", "s", "list", "--json"])] == [
        "sessionkeeper.cli.store_commands"]
    assert command_modules(["--check-resume", "abc", "--json"]) == []
    assert len(command_modules(["--check-resume", "abc", "--help"])) == len(MODULES)
    assert len(command_modules(["lsit"])) == len(MODULES)  # a typo gets the full parser's error


def test_a_command_line_adds_only_the_parsers_of_the_commands_it_names() -> None:
    """Fixture: none — the parser `main` builds for a listing, an archive, and no command."""
    def built(*args: str) -> set[str]:
        parser = parser_with(command_modules(args), top=add_top,
                             only=named_commands(args) or None)
        return set(_subcommands(parser))

    assert built("list", "--json", "--workspace", ".") == {"list"}
    assert built("--store", "s", "unarchive", "abc") == {"unarchive"}
    assert built("start", "--workspace", "w", "--title", "demo") == {"start", "demo"}
    assert built("lsit") == set(COMMANDS)  # a typo: every parser, for argparse's error


@pytest.mark.parametrize("columns", [None, "100", "37", "0", "wide"])
def test_help_is_as_wide_as_argparse_makes_it_with_shutil(
        monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    """Fixture: none — the whole parser's help, and a subcommand's, with $COLUMNS unset, set,
    and set to nonsense, beside argparse's own formatter (which measures with shutil)."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    ours = parser_with(command_modules(["list"]), top=add_top, only={"list"})
    theirs = parser_with(command_modules(["list"]), top=add_top, only={"list"})
    for parser in (theirs, _subcommands(theirs)["list"]):
        parser.formatter_class = argparse.HelpFormatter
    assert ours.format_help() == theirs.format_help()
    assert _subcommands(ours)["list"].format_help() == _subcommands(theirs)["list"].format_help()
