"""Redaction of every credential shape, in text and in encoded event bodies; innocent text kept.

Fixtures: tests/faults/canaries.py (CANARIES: one made-up secret per shape, in a text that
carries it; INNOCENT: texts with nothing secret that must come out unchanged).
"""

from __future__ import annotations

import orjson
import pytest

from sessionkeeper.redact import (
    SHAPES,
    _apply,
    _plan,
    placeholder,
    redact_json,
    redact_text,
    redact_value,
)

from ..faults.canaries import CANARIES, INNOCENT


@pytest.mark.parametrize("kind,secret,text", CANARIES, ids=[c[0] for c in CANARIES])
def test_every_known_shape_is_redacted_from_text(kind: str, secret: str, text: str) -> None:
    """Fixture: CANARIES (one per shape)."""
    done = redact_text(text)
    assert secret not in done and "[REDACTED:" in done, done


@pytest.mark.parametrize("kind,secret,text", CANARIES, ids=[c[0] for c in CANARIES])
def test_every_known_shape_is_redacted_from_an_encoded_body(kind: str, secret: str,
                                                             text: str) -> None:
    """Fixture: CANARIES, each inside a message body and an operation's args (the record path)."""
    for body in ({"type": "message", "role": "user", "text": text},
                 {"type": "operation", "operation_id": "op-1", "tool": "shell",
                  "status": "started", "args": {"cmd": text, "argv": ["sh", "-c", text]}}):
        out = redact_json(orjson.dumps(body))
        assert secret.encode() not in out and orjson.dumps(secret)[1:-1] not in out, out[:200]
        assert b"[REDACTED:" in out


@pytest.mark.parametrize("text", INNOCENT)
def test_text_with_nothing_secret_is_kept_exactly(text: str) -> None:
    """Fixture: INNOCENT."""
    assert redact_text(text) == text
    body = orjson.dumps({"type": "message", "role": "user", "text": text})
    assert redact_json(body) == body


@pytest.mark.parametrize("kind,secret,text", CANARIES, ids=[c[0] for c in CANARIES])
def test_redaction_is_idempotent(kind: str, secret: str, text: str) -> None:
    """Fixture: CANARIES; redacting twice changes nothing more (placeholders are never redacted)."""
    once = redact_text(text)
    assert redact_text(once) == once
    assert redact_value({"t": once}) == {"t": once}


def test_values_under_secret_named_keys_are_redacted_whatever_they_are() -> None:
    """Fixture: tool args with DB_PASSWORD (text), pin (int), Cookie header, nested credentials."""
    args = {"env": {"DB_PASSWORD": "plain", "PATH": "/usr/bin"}, "pin_password": 1234,
            "headers": {"Cookie": "sid=abc", "Accept": "json"},
            "credentials": {"user": "bob", "key": ["a", "b"]}, "empty_token": "", "ok": True}
    out = orjson.loads(redact_json(orjson.dumps({"type": "operation", "args": args})))["args"]
    assert out["env"] == {"DB_PASSWORD": placeholder("db_password", "plain"), "PATH": "/usr/bin"}
    assert out["pin_password"] == placeholder("pin_password", "1234")
    assert out["headers"] == {"Cookie": placeholder("cookie", "sid=abc"), "Accept": "json"}
    assert out["credentials"] == {"user": placeholder("credentials", "bob"),
                                  "key": [placeholder("credentials", "a"),
                                          placeholder("credentials", "b")]}
    assert out["empty_token"] == "" and out["ok"] is True


def test_equal_secrets_get_equal_placeholders_and_different_ones_differ() -> None:
    """Fixture: two texts with the same GitHub token and one with another."""
    token, other = CANARIES[3][1], "ghp_" + "Z" * 36
    first, second = redact_text(f"a {token}"), redact_text(f"b {token}")
    assert first[2:] == second[2:] and redact_text(f"a {other}") != first


def test_a_secret_used_as_a_key_is_redacted_too() -> None:
    """Fixture: a result dict keyed by a token."""
    token = CANARIES[3][1]
    out = redact_json(orjson.dumps({"type": "operation", "result": {token: 1}}))
    assert token.encode() not in out


def test_every_shape_has_lower_case_literals() -> None:
    """Fixture: SHAPES; the prefilter looks for lower-case literals in the lower-cased body."""
    assert all(s.literals for s in SHAPES)
    assert all(lit == lit.lower() for s in SHAPES for lit in s.literals)


@pytest.mark.parametrize("kind,secret,text", CANARIES, ids=[c[0] for c in CANARIES])
def test_the_prefilter_keeps_every_shape_that_would_redact_something(kind: str, secret: str,
                                                                      text: str) -> None:
    """Fixture: CANARIES inside a message body; each shape is run on its own, without the
    prefilter: every one that changes the text must be in the body's plan (literal + confirm)."""
    body = orjson.dumps({"type": "message", "role": "user", "text": f"x\n\t{text}\n\u00e9"})
    plan = _plan(body)
    for shape in SHAPES:
        if _apply(shape, orjson.loads(body)["text"]) != orjson.loads(body)["text"]:
            assert shape in plan.shapes, shape.kind


@pytest.mark.parametrize("space", ["\t", "\n", "\r\n", "\x0b", "\x1f", "\u00a0", "\u3000"],
                         ids=["tab", "newline", "crlf", "vtab", "unit-sep", "nbsp", "ideographic"])
@pytest.mark.parametrize("kind,secret,text", CANARIES, ids=[c[0] for c in CANARIES])
def test_the_prefilter_keeps_every_shape_when_the_spaces_are_escaped_in_json(
        kind: str, secret: str, text: str, space: str) -> None:
    """Fixture: CANARIES whose spaces are tabs, newlines or other whitespace (escaped in the
    encoded body as `\\t`, `\\n`, `\\u000b`, or not ASCII): every shape that changes the decoded
    text must be in the body's plan, and the record path redacts what redact_text redacts."""
    spaced = text.replace(" ", space)
    body = orjson.dumps({"type": "message", "role": "user", "text": spaced})
    plan = _plan(body)
    for shape in SHAPES:
        if _apply(shape, spaced) != spaced:
            assert shape in plan.shapes, shape.kind
    if secret not in redact_text(spaced):
        assert secret not in orjson.loads(redact_json(body))["text"]


_HORIZONTAL = {"tab": "\t", "vtab": "\x0b", "unit-sep": "\x1f", "nbsp": "\u00a0",
               "narrow-nbsp": "\u202f", "thin": "\u2009", "ideographic": "\u3000"}


@pytest.mark.parametrize("space", list(_HORIZONTAL.values()), ids=list(_HORIZONTAL))
@pytest.mark.parametrize("kind,secret,text", CANARIES, ids=[c[0] for c in CANARIES])
def test_a_secret_whose_spaces_are_other_horizontal_whitespace_is_still_redacted(
        kind: str, secret: str, text: str, space: str) -> None:
    """Fixture: CANARIES with every space replaced by a tab or another horizontal space (a text
    copied from a web page, a chat or a PDF has no-break spaces where it showed spaces): the
    secret is gone from the text and from the record path's body."""
    spaced = text.replace(" ", space)
    assert secret not in redact_text(spaced)
    body = orjson.dumps({"type": "message", "role": "user", "text": spaced})
    assert secret not in orjson.loads(redact_json(body))["text"]


@pytest.mark.parametrize("text", ["Authorization%3A%20Basic%20{c}%3D%3D",
                                  "GET /proxy?header=Authorization%3A+Basic%20{c}%3D%3D"])
def test_a_url_encoded_basic_credential_is_redacted(text: str) -> None:
    """Fixture: a Basic header URL-encoded in a query string (a logged request URL)."""
    credential = "ZGVwbG95OjVMV29PMG9QZ0NzZFVqemttVg"
    out = redact_text(text.format(c=credential))
    assert credential not in out and "[REDACTED:basic_auth:" in out


@pytest.mark.parametrize("text", ["password\t= hunter2222", "mysql --password\thunter2222",
                                  "Bearer\tabcdefghijklmnopqrstu", "Basic\tdXNlcjpwYXNzd29yZA==",
                                  'x = {"password"\t: "hunter2222"}',
                                  "authorization\n: abcdefghijkl"])
def test_a_secret_after_a_tab_or_newline_is_redacted_from_an_encoded_body(text: str) -> None:
    """Fixture: a credential whose name and value a tab or newline separates (`\\t`, `\\n` in the
    JSON the record path checks)."""
    out = orjson.loads(redact_json(orjson.dumps({"type": "message", "role": "user",
                                                 "text": text})))["text"]
    assert "[REDACTED:" in out and out == redact_text(text)


@pytest.mark.parametrize("text", ["cd ~/code/sk-learn-experiments-2024-refactor && make test",
                                  "/home/ana/sk-ant-colony-simulation-project/src/main.py",
                                  "notebooks/sk-learn-pipeline-comparison-v2.ipynb"])
def test_a_name_of_words_after_sk_is_no_api_key(text: str) -> None:
    """Fixture: directory and file names starting `sk-` (scikit-learn projects are often so
    named): hyphenated words, no random run, are kept — a redacted path never matches again."""
    assert redact_text(text) == text


@pytest.mark.parametrize("secret", ["sk-" + "3f9a1c07b2e84d6f9a0b5c1d2e3f4a5b",  # 32 hex
                                    "sk-" + "Ab3" * 16, "sk-proj-" + "x_Y-" * 3 + "Q7" * 20])
def test_a_key_after_sk_with_a_random_run_is_still_redacted(secret: str) -> None:
    """Fixture: keys of the `sk-` shape with a run of 16 letters and digits (hex keys too)."""
    assert secret not in redact_text(f"KEY={secret} and {secret}")
