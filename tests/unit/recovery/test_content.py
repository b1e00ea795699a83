"""Capturing file content for file history: stored, hash only with a reason, or missing (`repo`)."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest

from sessionkeeper.errors import InvalidWorkspace
from sessionkeeper.recovery.content import (
    HashOnly,
    Missing,
    Stored,
    capture,
    capture_at_commit,
    capture_content,
    is_secret_file,
)
from sessionkeeper.store.blobs import BlobStore
from tests.conftest import git


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def blobs(store_dir: Path) -> BlobStore:
    """An empty blob store in a temporary store."""
    return BlobStore(store_dir)


def test_a_text_file_is_stored_byte_for_byte(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo`, payment.py rewritten with CRLF endings and a token-looking string."""
    data = b"API_KEY = 'sk-live-1234567890abcdef1234567890abcdef'\r\nx = 1\r\n"
    (repo / "payment.py").write_bytes(data)
    found = capture(repo, "./payment.py", blobs=blobs)
    assert found == Stored("payment.py", _sha(data), len(data))
    assert blobs.get(found.hash) == data  # never redacted, never normalised


def test_a_file_with_a_nul_in_its_first_8000_bytes_is_hash_only_binary(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo`, logo.png with a NUL at byte 7999 and late.txt with one at byte 8000."""
    early = b"a" * 7999 + b"\0" + b"tail"
    late = b"a" * 8000 + b"\0" + b"tail"
    (repo / "logo.png").write_bytes(early)
    (repo / "late.txt").write_bytes(late)
    assert capture(repo, "logo.png", blobs=blobs) == HashOnly("logo.png", "binary", _sha(early), len(early))
    assert isinstance(capture(repo, "late.txt", blobs=blobs), Stored)  # git's test looks no further


def test_a_file_over_the_limit_is_hashed_in_full_but_not_stored(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo`, a 3 MB text file and a 1 MB limit."""
    data = b"line of text\n" * 250_000
    (repo / "big.log").write_bytes(data)
    found = capture(repo, "big.log", blobs=blobs, limit_bytes=1 << 20)
    assert found == HashOnly("big.log", "too_large", _sha(data), len(data))
    assert blobs.scan() == ([], [])


def test_a_path_leaving_the_workspace_is_never_read(repo: Path, tmp_path: Path, blobs: BlobStore) -> None:
    """Fixture: `repo` with link.txt -> a file outside it, and a path climbing out with `..`."""
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours\n")
    (repo / "link.txt").symlink_to(outside)
    (repo / "dir").symlink_to(tmp_path)
    assert capture(repo, "link.txt", blobs=blobs) == HashOnly("link.txt", "outside_workspace")
    assert capture(repo, "dir/secret.txt", blobs=blobs) == HashOnly("dir/secret.txt", "outside_workspace")
    assert capture(repo, "../secret.txt", blobs=blobs) == HashOnly("../secret.txt", "outside_workspace")
    assert capture(repo, str(outside), blobs=blobs).reason == "outside_workspace"  # type: ignore[union-attr]
    assert blobs.scan() == ([], [])


def test_a_symlink_inside_the_workspace_is_read_through(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo` with alias.py -> payment.py."""
    (repo / "alias.py").symlink_to("payment.py")
    found = capture(repo, "alias.py", blobs=blobs)
    assert isinstance(found, Stored) and blobs.get(found.hash) == (repo / "payment.py").read_bytes()


@pytest.mark.parametrize("name", [".env", ".env.local", "config/.env.production", ".envrc", "id_rsa",
                                  "certs/server.pem"])
def test_a_secrets_file_is_hashed_but_never_stored(repo: Path, blobs: BlobStore, name: str) -> None:
    """Fixture: `repo` with a secrets file at `name`."""
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"DB_PASSWORD=hunter2\n")
    found = capture(repo, name, blobs=blobs)
    assert found == HashOnly(name, "secret_file", _sha(b"DB_PASSWORD=hunter2\n"), 20)
    assert blobs.scan() == ([], [])
    assert isinstance(capture(repo, name, blobs=blobs, allow_secret_files=True), Stored)


def test_a_symlink_to_a_secrets_file_is_not_stored_either(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo` with settings.txt -> .env."""
    (repo / ".env").write_text("TOKEN=x\n")
    (repo / "settings.txt").symlink_to(".env")
    assert capture(repo, "settings.txt", blobs=blobs).reason == "secret_file"  # type: ignore[union-attr]


def test_secret_file_names_spare_templates_and_public_keys() -> None:
    """Fixture: none; names only."""
    assert not any(is_secret_file(n) for n in (".env.example", ".env.sample", "id_rsa.pub", "env.py",
                                              "environment.md"))
    assert all(is_secret_file(n) for n in (".ENV", "a/b/.env.test", "key.p12", "id_ed25519"))


def test_a_missing_file_is_missing(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo`; a path that does not exist and one under a file."""
    assert capture(repo, "gone.py", blobs=blobs) == Missing("gone.py")
    assert capture(repo, "payment.py/inner", blobs=blobs) == Missing("payment.py/inner")


def test_a_fifo_or_a_directory_is_never_opened_for_content(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo` with a FIFO nobody writes to and a directory."""
    os.mkfifo(repo / "pipe")
    (repo / "pkg").mkdir()
    done: list[object] = []
    reader = threading.Thread(target=lambda: done.append(capture(repo, "pipe", blobs=blobs)), daemon=True)
    reader.start()
    reader.join(5)
    assert done == [HashOnly("pipe", "not_a_file")]
    assert capture(repo, "pkg", blobs=blobs) == HashOnly("pkg", "not_a_file")


def test_capture_against_the_previous_version_stores_a_delta(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo`, a 60 KB module captured, edited one line, captured with the first as base."""
    text = "".join(f"def handler_{i}(request):\n    return respond(request, {i})\n" for i in range(1200))
    (repo / "handlers.py").write_text(text)
    first = capture(repo, "handlers.py", blobs=blobs)
    (repo / "handlers.py").write_text(text.replace("respond(request, 77)", "respond(request, 78)"))
    second = capture(repo, "handlers.py", blobs=blobs, base=first.hash)  # type: ignore[union-attr]
    assert isinstance(second, Stored)
    assert blobs.info(second.hash).base == first.hash  # type: ignore[union-attr]


def test_content_passed_explicitly_is_classified_like_a_file(blobs: BlobStore) -> None:
    """Fixture: none; bytes handed over by an API caller."""
    assert isinstance(capture_content("a.py", b"x = 1\n", blobs=blobs), Stored)
    assert capture_content("a.bin", b"\0\1", blobs=blobs).reason == "binary"  # type: ignore[union-attr]
    assert capture_content(".env", b"K=v\n", blobs=blobs).reason == "secret_file"  # type: ignore[union-attr]
    assert capture_content("../x", b"", blobs=blobs).reason == "outside_workspace"  # type: ignore[union-attr]


def test_a_tracked_file_s_content_at_the_baseline_commit_comes_from_git(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo`, payment.py changed on disk after its commit (the session's first edit)."""
    committed = (repo / "payment.py").read_bytes()
    head = git(repo, "rev-parse", "HEAD")
    (repo / "payment.py").write_text("edited by the agent\n")
    found = capture_at_commit(repo, "payment.py", commit=head, blobs=blobs)
    assert found == Stored("payment.py", _sha(committed), len(committed))
    assert blobs.get(found.hash) == committed
    assert git(repo, "status", "--porcelain") == "M payment.py"  # git was only read


def test_an_untracked_file_is_missing_at_the_baseline_commit(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo`, notes.md created after the commit."""
    (repo / "notes.md").write_text("new\n")
    assert capture_at_commit(repo, "notes.md", commit="HEAD", blobs=blobs) == Missing("notes.md")


def test_baseline_content_follows_a_workspace_inside_the_repository(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo` with src/app.py committed with eol=crlf; the workspace is src/."""
    (repo / ".gitattributes").write_text("*.py text eol=crlf\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_bytes(b"a = 1\nb = 2\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "src")
    found = capture_at_commit(repo / "src", "app.py", commit="HEAD", blobs=blobs)
    assert isinstance(found, Stored)
    assert blobs.get(found.hash) == b"a = 1\r\nb = 2\r\n"  # as checkout writes it, not the raw object
    assert capture_at_commit(repo / "src", "../payment.py", commit="HEAD",
                             blobs=blobs).reason == "outside_workspace"  # type: ignore[union-attr]


def test_binary_and_oversized_files_at_the_baseline_commit_are_hash_only(repo: Path,
                                                                         blobs: BlobStore) -> None:
    """Fixture: `repo` with a committed binary and a committed 2 MB file."""
    binary, big = b"\x89PNG\0\0data", b"y" * (2 << 20)
    (repo / "img.png").write_bytes(binary)
    (repo / "big.txt").write_bytes(big)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "assets")
    assert capture_at_commit(repo, "img.png", commit="HEAD", blobs=blobs) == HashOnly(
        "img.png", "binary", _sha(binary), len(binary))
    assert capture_at_commit(repo, "big.txt", commit="HEAD", blobs=blobs, limit_bytes=1 << 20) == HashOnly(
        "big.txt", "too_large", _sha(big), len(big))


def test_an_unknown_baseline_commit_is_a_clear_error(repo: Path, blobs: BlobStore) -> None:
    """Fixture: `repo`; a commit id that does not exist, and a directory outside git."""
    with pytest.raises(InvalidWorkspace, match="ls-tree"):
        capture_at_commit(repo, "payment.py", commit="0" * 40, blobs=blobs)
