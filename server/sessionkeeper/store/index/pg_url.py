"""The address of a shared PostgreSQL index, and keeping its password out of every text we make.

Invariant: `shown(url)` and `redacted(text, url)` never contain the password the URL carries
(in a `postgresql://user:password@…` URL or a `password=…` key of a conninfo string), raw or
percent-encoded; nothing here imports psycopg (a command line is checked without it).
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from ...errors import IndexUnavailable

SCHEMES = ("postgresql://", "postgres://")
_KEY_PASSWORD = re.compile(r"password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)")
_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)([^@\s]*)(@)")
HIDDEN = "***"


def is_postgres(url: str) -> bool:
    """True for a postgresql:// (or postgres://) URL or a libpq `key=value` conninfo string."""
    return url.startswith(SCHEMES) or "=" in url and not url.startswith(("/", "."))


def checked(url: str) -> str:
    """`url` when it names a PostgreSQL server; IndexUnavailable (saying so, without the URL's
    password) when it does not."""
    if not url.strip() or not is_postgres(url.strip()):
        raise IndexUnavailable(f"--index {shown(url)!s}: expected a postgresql://… URL")
    return url.strip()


def secrets(url: str) -> list[str]:
    """The password the URL carries, as written and decoded (empty: none)."""
    found: list[str] = []
    if url.startswith(SCHEMES):
        try:
            raw = urlsplit(url).password
        except ValueError:
            raw = None
        match = _URL_PASSWORD.search(url)
        for value in (raw, match.group(2) if match else None):
            if value:
                found += [value, unquote(value)]
    for match in _KEY_PASSWORD.finditer(url):
        value = match.group(1)
        found += [value, value.strip("'").replace("\\'", "'").replace("\\\\", "\\")]
    return sorted({s for s in found if s}, key=len, reverse=True)


def redacted(text: str, url: str) -> str:
    """`text` with the URL's password replaced by ***."""
    for secret in secrets(url):
        text = text.replace(secret, HIDDEN)
    return _KEY_PASSWORD.sub(f"password={HIDDEN}", _URL_PASSWORD.sub(rf"\1{HIDDEN}\3", text))


def shown(url: str) -> str:
    """The URL as we print it: its password replaced by ***."""
    return redacted(url, url)
