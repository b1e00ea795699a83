"""Which file content is kept as a blob: the secrets-file names, git's binary test, the size limit.

One definition for both readers of workspace files: `content` (recording in-process) and a tool
hook's capture (`hooks.capture`, which must not load the rest). Standard library only.
"""

from __future__ import annotations

import posixpath

DEFAULT_LIMIT_BYTES = 10 * 1024 * 1024
BINARY_PROBE_BYTES = 8000
SECRET_PATTERNS = (".env", ".env.*", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*",
                   "id_dsa*", "id_ecdsa*", "id_ed25519*", ".netrc", ".pgpass")
"""Names (lower-cased, shell patterns) of secrets files: hashed, never stored unless allowed."""
NOT_SECRET = (".env.example", ".env.sample", ".env.template", ".env.dist", "*.pub")
"""Names among those that hold no secret."""


def _split(patterns: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]:
    """(exact names, prefixes, suffixes) of patterns with at most one `*` at an end: matched
    with string operations (fnmatch compiles a regex per pattern: a tool hook's start)."""
    exact = frozenset(p for p in patterns if "*" not in p)
    return (exact, tuple(p[:-1] for p in patterns if p.endswith("*")),
            tuple(p[1:] for p in patterns if p.startswith("*")))


_SECRET = _split(SECRET_PATTERNS)
_NOT_SECRET = _split(NOT_SECRET)


def _matches(name: str, split: tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]) -> bool:
    exact, prefixes, suffixes = split
    return name in exact or name.startswith(prefixes) or name.endswith(suffixes)


def is_secret_file(path: str) -> bool:
    """True if the file's name looks like a secrets file (`.env`, `.env.local`, `id_rsa`, `*.pem`…)."""
    name = posixpath.basename(path.replace("\\", "/")).lower()
    return _matches(name, _SECRET) and not _matches(name, _NOT_SECRET)


def is_binary(head: bytes) -> bool:
    """True if the content is binary by git's test: a NUL byte in its first 8000 bytes."""
    return b"\0" in head[:BINARY_PROBE_BYTES]


def escapes(rel: str) -> bool:
    """True for a relative path that names the workspace itself or leaves it."""
    return rel == ".." or rel.startswith("../") or posixpath.isabs(rel) or rel == "."
