"""`hooks install` where it must refuse or take care: configs that are not JSON/TOML or of a
shape we cannot edit, unreadable files and unwritable dirs (typed errors, nothing changed),
symlinked configs, and two installs racing (real processes)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessionkeeper.errors import AgentConfigInvalid
from sessionkeeper.hooks import entries
from sessionkeeper.hooks.install import install, status, target, uninstall
from tests.faults.conftest import unavailable
from tests.unit.hooks._install_homes import (
    CLAUDE_SETTINGS,
    CODEX_CONFIG,
    PROGRAM,
    THEIR_HOOK,
    claude_target,
    codex_target,
    tree_of,
)


def test_an_unreadable_config_is_refused_and_left_exactly_as_it_is(tmp_path: Path,
                                                                  store_dir: Path) -> None:
    """Fixture: a settings.json that is not JSON; a config.toml that is not TOML."""
    broken = b'{"hooks": {"SessionStart": [}'
    where = claude_target(tmp_path, settings=broken)
    with pytest.raises(AgentConfigInvalid, match="not valid JSON"):
        install(where, store_root=store_dir, program=PROGRAM)
    assert where.hooks_file.read_bytes() == broken
    codex = codex_target(tmp_path)
    (codex.home / "config.toml").write_bytes(b"model = = \n")
    with pytest.raises(AgentConfigInvalid, match="not valid TOML"):
        install(codex, store_root=store_dir, program=PROGRAM)
    assert (codex.home / "config.toml").read_bytes() == b"model = = \n"


@pytest.mark.parametrize("toml", [b"model = = \n", b'model = "gpt-5" # caf\xe9\n',
                                  b"hooks = { }\n", b"[hooks]\nstate = { }\n",
                                  b"[[hooks]]\nx = 1\n", b'hooks = "x"\n'],
                         ids=["not TOML", "not UTF-8", "inline hooks", "inline state",
                              "array of hooks", "hooks a string"])
def test_a_codex_install_refused_for_its_config_toml_changes_no_file(toml: bytes, tmp_path: Path,
                                                                     store_dir: Path) -> None:
    """Fixture: a Codex home whose config.toml cannot be edited: not TOML, not UTF-8, or TOML
    with a `hooks` key of a shape trust tables cannot be added to (inline, an array, a string)."""
    codex = codex_target(tmp_path)
    (codex.home / "config.toml").write_bytes(toml)
    before = tree_of(codex.home)
    with pytest.raises(AgentConfigInvalid, match="config.toml"):
        install(codex, store_root=store_dir, program=PROGRAM)
    assert tree_of(codex.home) == before and not codex.hooks_file.exists()
    assert not (store_dir / "hooks" / "installs" / codex.key).exists()  # no manifest, no backup


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_config_that_is_a_symlink_stays_one_and_its_target_is_restored_byte_for_byte(
        agent: str, tmp_path: Path, store_dir: Path) -> None:
    """Fixture: the agent's config files are symlinks into a dotfiles directory (as dotfile
    managers leave them); install, then uninstall."""
    where = claude_target(tmp_path) if agent == "claude" else codex_target(tmp_path, hooks={"hooks": {}})
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    links = [where.hooks_file] + ([where.trust_file] if where.trust_file else [])
    for link in links:
        (dotfiles / link.name).write_bytes(link.read_bytes())
        link.unlink()
        link.symlink_to(dotfiles / link.name)
    before = tree_of(dotfiles)
    install(where, store_root=store_dir, program=PROGRAM)
    assert all(link.is_symlink() for link in links)
    assert set(entries.ours(json.loads((dotfiles / where.hooks_file.name).read_bytes()), agent)) \
        == set(entries.EVENTS_OF[agent])
    assert sorted(p.name for p in where.home.iterdir()) == sorted(link.name for link in links)
    uninstall(where, store_root=store_dir)
    assert all(link.is_symlink() for link in links)
    assert tree_of(dotfiles) == before


_PAUSED_INSTALL = """
import os, sys, time
from pathlib import Path
from sessionkeeper.cli import main
from sessionkeeper.hooks import config_file
read = config_file.load_json
def paused(path, data, **how):  # the config is read; wait here until the test says go
    out = read(path, data, **how)
    Path(sys.argv[1], "read").touch()
    deadline = time.monotonic() + 30
    while not Path(sys.argv[1], "go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return out
config_file.load_json = paused
sys.exit(main(["hooks", "install", "--agent", "codex", "--store", sys.argv[2]]))
"""


def test_an_install_racing_another_keeps_every_backup_and_uninstall_restores_byte_for_byte(
        tmp_path: Path) -> None:
    """Fixture: a Codex home with the user's hooks.json and config.toml; one real install
    process paused right after reading hooks.json while a second real install runs, then the
    first goes on, then one uninstall."""
    sk = Path(sys.executable).parent / "sessionkeeper"
    home, store, flags = tmp_path / "home", tmp_path / "store", tmp_path / "flags"
    for directory in (home, flags):
        directory.mkdir()
    (home / "config.toml").write_bytes(CODEX_CONFIG)
    (home / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [THEIR_HOOK]}}))
    before = tree_of(home)
    env = {**os.environ, "CODEX_HOME": str(home)}
    first = subprocess.Popen([sys.executable, "-c", _PAUSED_INSTALL, str(flags), str(store)],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not (flags / "read").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    second = subprocess.Popen([str(sk), "hooks", "install", "--agent", "codex", "--store",
                               str(store)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    with contextlib.suppress(subprocess.TimeoutExpired):
        second.wait(timeout=3)  # it finishes meanwhile (or waits for the first's lock)
    (flags / "go").touch()
    assert first.wait(timeout=60) == 0 and second.wait(timeout=60) == 0
    subprocess.run([str(sk), "hooks", "uninstall", "--agent", "codex", "--store", str(store)],
                   env=env, check=True, capture_output=True, timeout=60)
    assert tree_of(home) == before



def test_a_hooks_event_that_is_not_a_list_is_refused_and_left_as_it_is(tmp_path: Path,
                                                                       store_dir: Path) -> None:
    """Fixture: a settings.json whose SessionStart hooks are one object, not a list of groups."""
    settings = json.dumps({"hooks": {"SessionStart": THEIR_HOOK}}).encode()
    where = claude_target(tmp_path, settings=settings)
    with pytest.raises(AgentConfigInvalid, match="SessionStart"):
        install(where, store_root=store_dir, program=PROGRAM)
    assert where.hooks_file.read_bytes() == settings


def test_a_config_that_cannot_be_read_is_refused_with_a_typed_error(tmp_path: Path,
                                                                    store_dir: Path) -> None:
    """Fixture: a Claude home whose settings.json is a directory (read fails with EISDIR, as a
    root-owned 0600 file fails with EACCES); install, status and uninstall."""
    where = claude_target(tmp_path, settings=None)
    where.hooks_file.mkdir()
    for run in (lambda: install(where, store_root=store_dir, program=PROGRAM),
                lambda: uninstall(where, store_root=store_dir)):
        with pytest.raises(AgentConfigInvalid, match="cannot be read"):
            run()
    assert any("cannot be read" in note for note in status(where, store_root=store_dir)["notes"])
    assert where.hooks_file.is_dir() and list(where.hooks_file.iterdir()) == []


def test_a_config_dir_that_cannot_be_written_is_refused_with_a_typed_error(
        tmp_path: Path, store_dir: Path) -> None:
    """Fixture: a Claude home with settings.json, seen through a real read-only bind mount
    (needs root or CAP_SYS_ADMIN; skipped where it cannot be mounted)."""
    home = claude_target(tmp_path).home
    view = tmp_path / "ro"
    view.mkdir()
    if subprocess.run(["mount", "--bind", str(home), str(view)], capture_output=True).returncode:
        unavailable("mount --bind not permitted here")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True, capture_output=True)
        where = target("claude", config_dir=str(view))
        with pytest.raises(AgentConfigInvalid, match="cannot be written"):
            install(where, store_root=store_dir, program=PROGRAM)
        assert (home / "settings.json").read_bytes() == CLAUDE_SETTINGS
    finally:
        subprocess.run(["umount", "-l", str(view)], capture_output=True)
