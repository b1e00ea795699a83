"""The only writes ever made into an agent's config directory, and the backups that undo them.

Before `hooks install` first changes a file, its exact bytes (or the fact that it did not exist)
are kept in the store: `<store>/hooks/installs/<key>/manifest.json` + `<n>.orig`. The manifest
also keeps the sha256 of the file as Session Keeper left it, so `hooks uninstall` knows whether
anyone changed it since: unchanged → the original bytes are put back exactly (or the file
removed, and the directories it created); changed → only our entries are taken out.
Invariants: a config file is replaced whole (temp file in its directory, fsync, rename), keeping
its mode (a symlinked one in its target's directory: the symlink stays); the backup is durable
before the file is changed; backups live only in the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def sha256(data: bytes) -> str:
    """Hex sha256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def read(path: Path) -> bytes | None:
    """A config file's bytes, or None when it does not exist; AgentConfigInvalid when it cannot
    be read (a directory, a root-owned 0600 file after `sudo claude`)."""
    from ..errors import AgentConfigInvalid

    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AgentConfigInvalid(f"{path} cannot be read ({exc.strerror or exc}); "
                                 "left as it is") from None


def write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` at once (its mode kept; a new file is 0600); a symlink is
    written through, so it stays a symlink and its target gets the data."""
    path = Path(os.path.realpath(path))
    try:
        keep = mode if mode is not None else path.stat().st_mode & 0o7777
    except FileNotFoundError:
        keep = 0o600
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".sk-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, keep)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def missing_dirs(path: Path) -> list[Path]:
    """The directories above `path` that do not exist yet, outermost first."""
    out = []
    for parent in path.parents:
        if parent.exists():
            break
        out.append(parent)
    return list(reversed(out))


@dataclass
class Manifest:
    """What one installation changed: per file, its original state and what we left there."""

    store_root: Path
    key: str
    files: dict[str, dict[str, Any]]
    created_dirs: list[str]

    @property
    def directory(self) -> Path:
        """Where the manifest and its backups live."""
        return self.store_root / "hooks" / "installs" / self.key

    @classmethod
    def load(cls, store_root: Path, key: str) -> Manifest:
        """The manifest of one installation (empty when there is none or it cannot be read)."""
        try:
            data = json.loads((store_root / "hooks" / "installs" / key / "manifest.json").read_bytes())
            return cls(store_root, key, dict(data["files"]), list(data.get("created_dirs", [])))
        except (OSError, ValueError, KeyError, TypeError):
            return cls(store_root, key, {}, [])

    @property
    def exists(self) -> bool:
        """True when this installation changed a file and has not been undone."""
        return bool(self.files)

    def _ensure(self) -> None:
        from ..store.layout import ensure_private_dir

        ensure_private_dir(self.store_root)
        ensure_private_dir(self.directory, within=self.store_root)

    def save(self) -> None:
        """Write the manifest (durably: uninstall depends on it)."""
        self._ensure()
        data = json.dumps({"files": self.files, "created_dirs": self.created_dirs}, indent=1)
        write(self.directory / "manifest.json", data.encode())

    def keep_original(self, path: Path, original: bytes | None) -> None:
        """Back up a file's state before its first change (later changes keep the first backup;
        when the file was changed by someone else since our last write, that backup no longer
        holds what they wrote, so uninstall will only take our entries out)."""
        known = self.files.get(str(path))
        if known is not None:
            if original is None or known.get("installed_sha256") != sha256(original):
                known["changed_since_install"] = True
                self.save()
            return
        entry: dict[str, Any] = {"existed": original is not None, "backup": None, "mode": None}
        if original is not None:
            name = f"{len(self.files)}.orig"
            self._ensure()
            write(self.directory / name, original, mode=0o600)
            entry.update(backup=name, mode=path.stat().st_mode & 0o7777,
                         original_sha256=sha256(original))
        self.files[str(path)] = entry
        self.save()

    def left(self, path: Path, data: bytes) -> None:
        """Remember what we left in a file."""
        self.files[str(path)]["installed_sha256"] = sha256(data)
        self.save()

    def backup_of(self, path: Path) -> Path | None:
        """Where a file's original bytes are kept (None: it did not exist, or no backup)."""
        entry = self.files.get(str(path)) or {}
        return self.directory / entry["backup"] if entry.get("backup") else None

    def unchanged_since_install(self, path: Path) -> bool:
        """True when the file holds exactly what we left there."""
        entry = self.files.get(str(path)) or {}
        now = read(path)
        return (now is not None and not entry.get("changed_since_install")
                and entry.get("installed_sha256") == sha256(now))

    def restore(self, path: Path) -> str:
        """Put a file back as it was before the install; returns what was done."""
        entry = self.files[str(path)]
        if not entry.get("existed"):
            Path(os.path.realpath(path)).unlink(missing_ok=True)
            return f"removed {path} (it did not exist before)"
        backup = self.backup_of(path)
        assert backup is not None
        write(path, backup.read_bytes(), mode=entry.get("mode"))
        return f"restored {path} byte for byte"

    def remove_created_dirs(self) -> None:
        """Remove the directories the install created, when they are empty again."""
        for directory in reversed(self.created_dirs):
            with contextlib.suppress(OSError):
                os.rmdir(directory)

    def discard(self) -> None:
        """Delete the manifest and its backups (after a complete uninstall)."""
        for name in os.listdir(self.directory) if self.directory.is_dir() else []:
            (self.directory / name).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.directory.rmdir()
