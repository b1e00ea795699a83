"""Hook stdin: what the agents send is parsed into a HookInput; anything else is a clear message,
exit 0 for the agent, and nothing recorded."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sessionkeeper.errors import HookInputInvalid
from sessionkeeper.hooks.payload import parse
from tests.unit._hooks import SID, SK, payload, records, run


def _raw(agent: str, event: str, cwd: Path, **fields: Any) -> bytes:
    return json.dumps(payload(agent, event, cwd, **fields)).encode()


def test_the_stdin_each_agent_sends_is_parsed_with_its_event_fields(tmp_path: Path) -> None:
    """Fixture: `tmp_path` as the cwd; stdin shaped as Claude 2.1.332 and Codex 0.171.0 send it."""
    start = parse("codex", "SessionStart", _raw("codex", "SessionStart", tmp_path, source="resume"))
    assert (start.session_id, start.cwd, start.source, start.model) == (SID, str(tmp_path), "resume",
                                                                         "gpt-5")
    tool = parse("claude", "PostToolUse", _raw("claude", "PostToolUse", tmp_path, tool_name="Bash",
                                               tool_input={"command": "ls"},
                                               tool_response={"stdout": "a"}, tool_use_id="toolu_01"))
    assert (tool.tool_use_id, tool.tool_name, tool.tool_input, tool.tool_response) == (
        "toolu_01", "Bash", {"command": "ls"}, {"stdout": "a"})
    end = parse("claude", "SessionEnd", _raw("claude", "SessionEnd", tmp_path, reason="logout"))
    assert end.reason == "logout"
    upper = parse("claude", "UserPromptSubmit",
                  _raw("claude", "UserPromptSubmit", tmp_path, session_id=SID.upper(), prompt="hi"))
    assert upper.session_id == SID and upper.prompt == "hi"


@pytest.mark.parametrize(("agent", "event", "raw", "says"), [
    ("claude", "SessionStart", b"", "stdin is empty"),
    ("claude", "SessionStart", b"   \n", "stdin is empty"),
    ("claude", "SessionStart", b"{not json", "stdin is not JSON"),
    ("claude", "SessionStart", b"[1, 2]", "not an object"),
    ("claude", "Notification", b"{}", "unknown event 'Notification'"),
    ("gemini", "SessionStart", b"{}", "unknown agent 'gemini'"),
    ("claude", "SessionStart", b'{"session_id": "%s", "source": "startup"}' % SID.encode(),
     "field 'cwd' is missing"),
    ("claude", "SessionStart", b'{"session_id": "abc", "cwd": "/tmp", "source": "startup"}',
     "session_id 'abc' is not a UUID"),
    ("claude", "SessionStart", b'{"session_id": "../../etc", "cwd": "/tmp", "source": "startup"}',
     "is not a UUID"),
    ("claude", "SessionStart", b'{"session_id": "%s", "cwd": "rel/dir", "source": "startup"}'
     % SID.encode(), "not an absolute path"),
    ("claude", "SessionStart", b'{"session_id": "%s", "cwd": "/tmp"}' % SID.encode(),
     "field 'source' is missing"),
    ("claude", "SessionStart", b'{"session_id": "%s", "cwd": "/tmp", "source": "reboot"}'
     % SID.encode(), "source 'reboot'"),
    ("codex", "PreToolUse", b'{"session_id": "%s", "cwd": "/tmp", "tool_name": "Bash"}'
     % SID.encode(), "field 'tool_use_id' is missing"),
    ("codex", "PreToolUse", b'{"session_id": "%s", "cwd": "/tmp", "tool_name": "Bash", '
     b'"tool_use_id": "a/b"}' % SID.encode(), "tool_use_id 'a/b'"),
    ("claude", "UserPromptSubmit", b'{"session_id": "%s", "cwd": "/tmp", '
     b'"hook_event_name": "Stop"}' % SID.encode(), "is not the event 'UserPromptSubmit'"),
    ("claude", "PreToolUse", b'{"session_id": "%s", "cwd": "/tmp", "tool_name": "Bash", '
     b'"tool_use_id": "t1", "tool_input": {"n": NaN}}' % SID.encode(), "NaN is not a JSON value"),
    ("codex", "PostToolUse", b'{"session_id": "%s", "cwd": "/tmp", "tool_name": "Bash", '
     b'"tool_use_id": "t1", "tool_response": -Infinity}' % SID.encode(),
     "-Infinity is not a JSON value"),
])
def test_bad_stdin_is_refused_with_a_message_naming_what_is_wrong(agent: str, event: str,
                                                                  raw: bytes, says: str) -> None:
    """Fixture: hand-written stdin, each wrong in one way."""
    with pytest.raises(HookInputInvalid, match=says.replace("(", r"\(").replace("[", r"\[")):
        parse(agent, event, raw)


@pytest.mark.parametrize(("argv_event", "stdin"), [
    ("SessionStart", ""),
    ("SessionStart", "not json at all"),
    ("NoSuchEvent", "{}"),
    ("SessionStart", '{"session_id": "not-a-uuid", "cwd": "/tmp", "source": "startup"}'),
    ("PreToolUse", json.dumps({"session_id": SID, "cwd": "/tmp"})),
])
def test_a_bad_call_exits_0_with_one_line_and_records_nothing(store_dir: Path, repo: Path,
                                                              argv_event: str, stdin: str) -> None:
    """Fixture: `repo`, an empty store; the real `sessionkeeper hook` process."""
    done = run("claude", argv_event, stdin.replace("/tmp", str(repo)), store_dir)
    assert done.returncode == 0
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sessionkeeper hook claude ") and "ignored" in lines[0]
    assert "Traceback" not in done.stderr
    assert records(store_dir, "claude") == []
    assert not (store_dir / "journals").exists()


def test_a_call_with_wrong_arguments_exits_0_and_never_reaches_argparse(store_dir: Path) -> None:
    """Fixture: the real process, called with too few and too many arguments."""
    for args in (["claude"], ["claude", "SessionStart", "extra"], []):
        done = subprocess.run([SK, "hook", *args], input=b"{}", capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stderr.decode().count("\n") == 1 and b"usage: sessionkeeper hook" in done.stderr


def test_a_tool_call_with_a_lone_surrogate_is_recorded_with_a_replacement_character(
        store_dir: Path, repo: Path) -> None:
    """Fixture: `repo`; a Claude start, then Pre/PostToolUse of a Bash call whose input and
    output hold a lone surrogate escaped as JSON (as node's JSON.stringify writes an emoji cut
    in half by a truncation), sent to the real `sessionkeeper hook` process."""
    run("claude", "SessionStart", _raw("claude", "SessionStart", repo, source="startup"), store_dir)
    call = {"tool_name": "Bash", "tool_use_id": "toolu_01", "tool_input": {"command": "echo x"},
            "tool_response": {"stdout": "y"}}
    for event in ("PreToolUse", "PostToolUse"):
        raw = _raw("claude", event, repo, **call).replace(b"echo x", b"echo \\ud83d").replace(
            b'"y"', b'"\\udca9 cut"')
        done = run("claude", event, raw, store_dir)
        assert done.returncode == 0 and done.stderr == "", done.stderr
    operations = [r for r in records(store_dir, "claude") if r["type"] == "operation"]
    assert [op["status"] for op in operations] == ["started", "committed"]
    assert operations[0]["args"] == {"command": "echo \ufffd"}
    assert operations[1]["result"] == {"stdout": "\ufffd cut"}


def test_a_deeply_nested_input_with_a_lone_surrogate_is_refused_as_invalid(tmp_path: Path) -> None:
    """Fixture: `tmp_path` as the cwd; a PreToolUse whose tool_input nests 900 lists deep around
    a lone surrogate (below json's own limit)."""
    raw = _raw("claude", "PreToolUse", tmp_path, tool_name="Bash", tool_use_id="toolu_01",
               tool_input="HERE").replace(b'"HERE"', b"[" * 900 + b'"\\ud83d"' + b"]" * 900)
    with pytest.raises(HookInputInvalid, match="nests too deeply"):
        parse("claude", "PreToolUse", raw)


_ASCII_LOCALE = {"LC_ALL": "C", "PYTHONUTF8": "0"}
"""A machine whose locale is not UTF-8: Python's default text encoding is then ASCII."""


def test_in_an_ascii_locale_a_gated_resume_exits_0_with_utf8_json(store_dir: Path, repo: Path,
                                                                  tmp_path: Path) -> None:
    """Fixture: `repo`; a Claude start, then a resume in another repository, by the real
    process in an ASCII locale (the answer's text holds an em dash)."""
    from tests.conftest import init_repo

    run("claude", "SessionStart", _raw("claude", "SessionStart", repo, source="startup"), store_dir)
    other = init_repo(tmp_path / "other", {"x": "x\n"})
    done = run("claude", "SessionStart", _raw("claude", "SessionStart", other, source="resume"),
               store_dir, env=_ASCII_LOCALE)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "\u2014" in context and "another repository" in context


def test_in_an_ascii_locale_a_todo_list_that_is_not_ascii_is_recorded_with_its_digest(
        store_dir: Path, repo: Path) -> None:
    """Fixture: `repo`; a Claude start and a TodoWrite of "café" by the real process in an
    ASCII locale."""
    run("claude", "SessionStart", _raw("claude", "SessionStart", repo, source="startup"), store_dir)
    done = run("claude", "PostToolUse", _raw(
        "claude", "PostToolUse", repo, tool_name="TodoWrite", tool_use_id="toolu_t1",
        tool_input={"todos": [{"content": "café", "status": "pending"}]}), store_dir,
        env=_ASCII_LOCALE)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert [r["items"][0]["text"] for r in records(store_dir, "claude") if r["type"] == "todo"] \
        == ["café"]
    assert (store_dir / "hooks" / "digests" / f"claude-{SID}.json").exists()
