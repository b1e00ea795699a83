"""Human output is safe for a terminal and aligned; CI annotations are escaped and on stderr."""

from __future__ import annotations

import pytest

from sessionkeeper.cli.check import annotate
from sessionkeeper.recovery.findings import Difference
from sessionkeeper.recovery.report import Report
from sessionkeeper.recovery.summary import ThreadSummary
from sessionkeeper.render import clean, report_text, table, threads_text, width


def test_control_characters_and_terminal_escapes_are_shown_escaped() -> None:
    """Fixture: a title with a newline, a carriage return, an ANSI colour and an OSC 52 escape."""
    title = "fix\nit\r\x1b[31mred\x1b]52;c;ZXZpbA==\x07"
    text = clean(title)
    assert "\x1b" not in text and "\n" not in text and "\r" not in text and "\x07" not in text
    assert text == "fix\\nit\\r\\x1b[31mred\\x1b]52;c;ZXZpbA==\\x07"
    listing = threads_text([ThreadSummary(thread_id="t", title=title)])
    assert "\x1b" not in listing and len(listing.splitlines()) == 3


def test_wide_characters_are_aligned_by_display_width() -> None:
    """Fixture: a CJK title, an emoji title and a plain one in one table."""
    rows = [["修复支付", "x"], ["🚀 ship", "y"], ["plain", "z"]]
    lines = table(rows, ["title", "v"]).splitlines()
    assert width("修复支付") == 8 and width("🚀") == 2
    assert len({width(line[:-1]) for line in lines[2:]}) == 1  # the last column starts aligned


def test_reports_escape_what_came_from_the_log() -> None:
    """Fixture: a report whose title and difference detail carry escapes."""
    report = Report(verdict="drift", thread_id="t", restored_to_seq=3, workspace="/w",
                    title="\x1b[2Jwiped", differences=[Difference("branch", "a", "b", "\x1b]0;x\x07")])
    assert "\x1b" not in report_text(report)


def test_annotations_are_escaped_name_files_and_go_to_stderr(capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    """Fixture: a drift report with a changed file whose name holds a comma, a % and a newline."""
    report = Report(verdict="drift", thread_id="t", restored_to_seq=3, workspace="/w", differences=[
        Difference("file_changed", {"path": "a,b%c\nd.py", "hash": "x"}, None, "changed 100%")])
    annotate(report)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("::warning title=Session Keeper resume drift::")
    assert lines[1] == ("::warning file=a%2Cb%25c%0Ad.py,title=Session Keeper%3A file_changed::"
                        "changed 100%25")
