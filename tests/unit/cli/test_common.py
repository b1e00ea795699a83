"""Where the shared index comes from (--index, $SESSIONKEEPER_INDEX, the editor's option) and that
its password never shows in what is said about it (no server needed: nothing connects here)."""

from __future__ import annotations

import argparse

import pytest

from sessionkeeper.cli.common import ENV_INDEX, shared_index
from sessionkeeper.errors import IndexUnavailable
from sessionkeeper.lsp.options import parse_options
from sessionkeeper.store.index.pg_url import redacted, shown

SECRET = "s3cr%40t-Pw"


def test_the_command_line_wins_over_the_environment_and_local_turns_it_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: $SESSIONKEEPER_INDEX set; command lines with and without --index."""
    monkeypatch.setenv(ENV_INDEX, "postgresql://env@db/sk")
    assert shared_index(argparse.Namespace(index=None)) == "postgresql://env@db/sk"
    assert shared_index(argparse.Namespace(index="postgresql://cli@db/sk")) == \
        "postgresql://cli@db/sk"
    assert shared_index(argparse.Namespace(index="local")) is None
    monkeypatch.delenv(ENV_INDEX)
    assert shared_index(argparse.Namespace()) is None


def test_a_value_that_is_no_postgres_url_is_refused_without_quoting_its_password() -> None:
    """Fixture: an http URL carrying a password."""
    with pytest.raises(IndexUnavailable) as caught:
        shared_index(argparse.Namespace(index=f"http://ana:{SECRET}@db/sk"))
    assert SECRET not in str(caught.value) and "ana:***@db" in str(caught.value)


def test_passwords_are_redacted_in_urls_conninfo_strings_and_any_text_naming_them() -> None:
    """Fixture: a percent-encoded password in a URL and a quoted one in a conninfo string."""
    url = f"postgresql://ana:{SECRET}@db:5432/sk"
    assert shown(url) == "postgresql://ana:***@db:5432/sk"
    text = redacted(f"failed for {url} (password s3cr@t-Pw)", url)
    assert "s3cr" not in text
    conninfo = r"host=db user=ana password='it\'s secret' dbname=sk"
    assert "secret" not in shown(conninfo) and "password=***" in shown(conninfo)


def test_the_editor_option_is_checked_and_a_bad_one_is_a_problem_without_its_password() -> None:
    """Fixture: initializationOptions with a good and then a bad `index`."""
    options, problems = parse_options({"index": "postgresql://ana@db/sk"})
    assert options.index == "postgresql://ana@db/sk" and problems == []
    options, problems = parse_options({"index": f"mysql://ana:{SECRET}@db/sk"})
    assert options.index is None and len(problems) == 1 and SECRET not in problems[0]
