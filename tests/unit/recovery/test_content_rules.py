"""Which files are secrets files (`recovery.content_rules`): the string matching a tool hook uses
answers exactly what shell patterns (fnmatch) over the same lists answer."""

from __future__ import annotations

import fnmatch
import posixpath

import pytest

from sessionkeeper.recovery.content_rules import NOT_SECRET, SECRET_PATTERNS, is_secret_file

NAMES = [".env", ".env.local", ".ENV", ".env.", ".envrc", ".environment", "a.env", "env", "a.pem",
         "x.KEY", "keys.py", "key", "id_rsa", "id_rsa.pub", "id_ed25519_sk", "id_dsa", "id_ecdsa",
         ".netrc", ".pgpass", "cert.p12", "b.pfx", ".env.example", ".env.dist", ".env.sample.bak",
         "foo.pub", "pub", "x/y/.env", "C:\\x\\.env", "deep/dir/server.key", "README.md"]


def _by_patterns(path: str) -> bool:
    name = posixpath.basename(path.replace("\\", "/")).lower()
    if any(fnmatch.fnmatchcase(name, p) for p in NOT_SECRET):
        return False
    return any(fnmatch.fnmatchcase(name, p) for p in SECRET_PATTERNS)


@pytest.mark.parametrize("path", NAMES)
def test_a_secrets_file_is_told_as_its_shell_patterns_tell_it(path: str) -> None:
    """No fixture: NAMES above."""
    assert is_secret_file(path) is _by_patterns(path)
