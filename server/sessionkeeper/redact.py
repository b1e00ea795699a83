"""Redact credentials from event payloads before they reach disk.

A value matching a known credential shape (or stored under a credential-named key) is replaced by
`[REDACTED:<kind>:<sha256 prefix>]`, so equal secrets stay recognisable without being stored.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import orjson

_SHAPES: list[tuple[str, re.Pattern[str]]] = [
    ("private_key", re.compile(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)")),
    ("anthropic_key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai_key", re.compile(r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}")),
    ("github_token", re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack_token", re.compile(r"xox[baprs]-[A-Za-z0-9-]{10,}")),
    ("google_api_key", re.compile(r"AIza[0-9A-Za-z_\-]{35}")),
    ("jwt", re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer_token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{20,}")),
]
# A value stored under a key that is (or ends with) one of these is a secret, whatever it looks
# like: `password`, `DB_PASSWORD`, `github_token`, `client_secret`, `Authorization`, ...
_SECRET_KEY_ENDINGS = ("password", "passwd", "secret", "token", "api_key", "apikey",
                       "private_key", "access_key", "secret_access_key", "authorization",
                       "credentials")
_KEY_ENDINGS = tuple(e.encode() for e in _SECRET_KEY_ENDINGS)
# Cheap checks over the lower-cased encoded bytes decide whether the structured walk is needed.
_SHAPE_PREFILTER = re.compile(
    rb"private key|sk-|gh[pousr]_|github_pat_|akia|asia|xox[baprs]-|aiza|eyj|bearer ")


def secret_key(key: str) -> bool:
    """True for a key whose value is a secret by name."""
    return key.lower().endswith(_SECRET_KEY_ENDINGS)


def placeholder(kind: str, secret: str) -> str:
    """The text that stands in for a redacted secret."""
    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"[REDACTED:{kind}:{digest}]"


def redact_text(text: str) -> str:
    """Replace every credential-shaped substring of `text`."""
    for kind, pattern in _SHAPES:
        text = pattern.sub(_replacer(kind), text)
    return text


def _replacer(kind: str) -> Callable[[re.Match[str]], str]:
    return lambda match: placeholder(kind, match.group(0))


def redact_value(value: Any, key: str | None = None) -> Any:
    """Return `value` with secrets replaced, recursing into lists and dicts."""
    if isinstance(value, str):
        if key is not None and value and secret_key(key):
            return placeholder(key.lower(), value)
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_value(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value


def _has_secret_key(low: bytes) -> bool:
    """True when some `"key":` in the encoded JSON ends with a secret name."""
    end = low.find(b'":')
    while end != -1:
        if low[low.rfind(b'"', 0, end) + 1:end].endswith(_KEY_ENDINGS):
            return True
        end = low.find(b'":', end + 2)
    return False


def redact_json(body: bytes) -> bytes:
    """Redact an encoded JSON object; returns the same bytes when nothing looks secret."""
    low = body.lower()
    if not _SHAPE_PREFILTER.search(low) and not _has_secret_key(low):
        return body
    return orjson.dumps(redact_value(orjson.loads(body)))
