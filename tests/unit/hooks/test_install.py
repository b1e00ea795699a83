"""`hooks install | uninstall | status` on real config files in throwaway config dirs: merged
without touching other hooks, idempotent, backed up, Codex trust, restored byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sessionkeeper.hooks import codex_trust, entries
from sessionkeeper.hooks.install import install, status, target, uninstall
from sessionkeeper.hooks.state import note_run
from tests.unit.hooks._install_homes import (
    CLAUDE_SETTINGS,
    CODEX_CONFIG,
    PROGRAM,
    THEIR_HOOK,
    claude_target,
    codex_target,
    tree_of,
)


def test_claude_install_merges_our_hooks_and_keeps_every_other_setting(tmp_path: Path,
                                                                      store_dir: Path) -> None:
    """Fixture: a settings.json with a model, permissions and another tool's PreToolUse hook."""
    where = claude_target(tmp_path)
    done = install(where, store_root=store_dir, program=PROGRAM)
    assert done.changed == [str(where.hooks_file)]
    config = json.loads(where.hooks_file.read_bytes())
    assert config["model"] == "opus" and config["permissions"] == {"allow": ["Bash(ls)"]}
    assert config["hooks"]["PreToolUse"][0] == THEIR_HOOK
    assert set(entries.ours(config, "claude")) == set(entries.EVENTS_OF["claude"])
    assert config["hooks"]["PreToolUse"][1] == {
        "matcher": "*", "hooks": [{"type": "command", "timeout": 15,
                                   "command": "/opt/sk/bin/sessionkeeper hook claude PreToolUse"}]}
    assert config["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == 2
    backup = Path(str(done.backup))
    assert backup.read_bytes() == CLAUDE_SETTINGS and store_dir in backup.parents


def test_installing_twice_changes_nothing_the_second_time(tmp_path: Path, store_dir: Path) -> None:
    """Fixture: a Claude settings.json and a Codex home, each installed twice."""
    for where in (claude_target(tmp_path), codex_target(tmp_path)):
        install(where, store_root=store_dir, program=PROGRAM)
        after_first = tree_of(where.home)
        again = install(where, store_root=store_dir, program=PROGRAM)
        assert again.changed == [] and tree_of(where.home) == after_first
        assert any("already" in line for line in again.done)


def test_a_moved_installation_updates_our_entries_in_place(tmp_path: Path, store_dir: Path) -> None:
    """Fixture: installed with one program path, then with another (a new virtualenv)."""
    where = claude_target(tmp_path)
    install(where, store_root=store_dir, program=PROGRAM)
    install(where, store_root=store_dir, program=["/new/venv/bin/sessionkeeper"])
    config = json.loads(where.hooks_file.read_bytes())
    commands = [g["hooks"][0]["command"] for gs in config["hooks"].values() for g in gs
                if entries.is_ours(g, "claude", g["hooks"][0]["command"].split()[-1])]
    assert len(commands) == len(entries.EVENTS_OF["claude"])
    assert all(c.startswith("/new/venv/bin/sessionkeeper hook claude ") for c in commands)
    uninstall(where, store_root=store_dir)
    assert where.hooks_file.read_bytes() == CLAUDE_SETTINGS


def test_an_install_by_an_older_version_is_upgraded_in_place_to_the_thin_command(
        tmp_path: Path, store_dir: Path) -> None:
    """Fixture: hooks installed as the console script (before the thin start), then installed by
    default: one group per event, each running this interpreter with -S on our __main__.py; the
    MCP server stays on the console script; `status` notes a command whose file is gone."""
    where = claude_target(tmp_path)
    install(where, store_root=store_dir, program=PROGRAM)
    install(where, store_root=store_dir, mcp=True)
    config = json.loads(where.hooks_file.read_bytes())
    groups = {event: [g for g in gs if entries.is_ours(g, "claude", event)]
              for event, gs in config["hooks"].items()}
    assert sorted(groups) == sorted(entries.EVENTS_OF["claude"])
    thin = entries.thin_program()
    assert thin[1] == "-S" and Path(thin[2]).is_file() and thin[2].endswith("sessionkeeper/__main__.py")
    for event, found in groups.items():
        [group] = found
        assert group["hooks"][0]["command"].split() == [*thin, "hook", "claude", event]
    mcp = json.loads(where.mcp_file.read_bytes())
    assert "-S" not in json.dumps(mcp)
    assert not [n for n in status(where, store_root=store_dir)["notes"] if "does not exist" in n]
    moved = [thin[0], "-S", "/gone/sessionkeeper/__main__.py"]
    install(where, store_root=store_dir, program=moved)
    assert any("/gone/sessionkeeper/__main__.py does not exist" in n
               for n in status(where, store_root=store_dir)["notes"])


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_uninstall_restores_the_original_files_byte_for_byte(agent: str, tmp_path: Path,
                                                             store_dir: Path) -> None:
    """Fixture: the agent's home with its own files, installed, then uninstalled."""
    where = claude_target(tmp_path) if agent == "claude" else codex_target(tmp_path, {"hooks": {
        "Stop": [THEIR_HOOK]}})
    before = tree_of(where.home)
    install(where, store_root=store_dir, program=PROGRAM, store="/my/store")
    assert tree_of(where.home) != before
    done = uninstall(where, store_root=store_dir)
    assert tree_of(where.home) == before
    assert all("byte for byte" in line for line in done.done)
    assert not (store_dir / "hooks" / "installs" / where.key).exists()


def test_uninstall_removes_files_and_directories_the_install_created(tmp_path: Path,
                                                                     store_dir: Path) -> None:
    """Fixture: a Claude home without settings.json; a project without .claude/ (project scope)."""
    where = claude_target(tmp_path, settings=None)
    install(where, store_root=store_dir, program=PROGRAM)
    assert where.hooks_file.exists() and oct(where.hooks_file.stat().st_mode & 0o777) == "0o600"
    uninstall(where, store_root=store_dir)
    assert not where.hooks_file.exists() and where.home.is_dir()
    project = tmp_path / "proj"
    project.mkdir()
    scoped = target("claude", scope="project", project=str(project), config_dir=str(where.home))
    assert scoped.hooks_file == project / ".claude" / "settings.json"
    install(scoped, store_root=store_dir, program=PROGRAM)
    uninstall(scoped, store_root=store_dir)
    assert list(project.iterdir()) == []


def test_a_file_changed_after_the_install_keeps_the_change_and_loses_only_our_entries(
        tmp_path: Path, store_dir: Path) -> None:
    """Fixture: installed, then the user adds a setting; then uninstalled."""
    where = claude_target(tmp_path)
    install(where, store_root=store_dir, program=PROGRAM)
    config = json.loads(where.hooks_file.read_bytes())
    config["theme"] = "dark"
    where.hooks_file.write_text(json.dumps(config, indent=2) + "\n")
    done = uninstall(where, store_root=store_dir)
    left = json.loads(where.hooks_file.read_bytes())
    assert left["theme"] == "dark" and left["hooks"] == {"PreToolUse": [THEIR_HOOK]}
    assert entries.ours(left, "claude") == {}
    assert any("only they were taken out" in line for line in done.done)


def test_a_file_changed_between_two_installs_keeps_the_change_after_uninstall(
        tmp_path: Path, store_dir: Path) -> None:
    """Fixture: installed, then the user adds a setting, then installed again from another
    virtualenv (as `hooks status` advises after a move); then uninstalled."""
    where = claude_target(tmp_path)
    install(where, store_root=store_dir, program=PROGRAM)
    config = json.loads(where.hooks_file.read_bytes())
    config["theme"] = "dark"
    where.hooks_file.write_text(json.dumps(config, indent=2) + "\n")
    install(where, store_root=store_dir, program=["/new/venv/bin/sessionkeeper"])
    uninstall(where, store_root=store_dir)
    left = json.loads(where.hooks_file.read_bytes())
    assert left["theme"] == "dark" and left["hooks"] == {"PreToolUse": [THEIR_HOOK]}
    assert entries.ours(left, "claude") == {}


def test_codex_install_trusts_exactly_our_hooks_with_the_hash_codex_computes(
        tmp_path: Path, store_dir: Path) -> None:
    """Fixture: a Codex home with config.toml and a hooks.json holding another Stop hook."""
    where = codex_target(tmp_path, {"hooks": {"SessionStart": [THEIR_HOOK]}})
    install(where, store_root=store_dir, program=PROGRAM)
    hooks = json.loads(where.hooks_file.read_bytes())
    assert hooks["hooks"]["SessionStart"][0] == THEIR_HOOK  # theirs first, at its old position
    trust = codex_trust.trust_of((where.home / "config.toml").read_text())
    hooks_json = os.path.realpath(where.hooks_file)
    ours = {f"{hooks_json}:{codex_trust.EVENT_KEYS[e]}:{1 if e == 'SessionStart' else 0}:0"
            for e in entries.EVENTS_OF["codex"]}
    assert set(trust) == ours | {"/elsewhere/hooks.json:stop:0:0"}
    assert f"{hooks_json}:session_start:0:0" not in trust  # theirs is never trusted by us
    text = (where.home / "config.toml").read_text()
    assert text.startswith(CODEX_CONFIG.decode())  # every earlier line kept as it was
    report = status(where, store_root=store_dir)
    assert report["installed"] is True and report["trusted"] is True


def test_the_trust_hash_is_codexs_own_for_a_known_hook() -> None:
    """Fixture: a hook whose currentHash the real Codex 0.171.0 app-server reported (hooks/list)."""
    group = {"hooks": [{"type": "command", "command": "/x/hook.sh SessionStart", "timeout": 30}]}
    assert codex_trust.trust_hash("SessionStart", group) == (
        "sha256:2405f9d4bc46b6f695c894bca8d59945eb0d8b289f885e927f8f1c32b9821f1b")
    tool = {"matcher": "*", "hooks": [{"type": "command", "command": "/x/hook.sh Pre", "timeout": 10}]}
    assert codex_trust.trust_hash("PreToolUse", tool) == (
        "sha256:97bdaaf4150fe129af185a928246681646421678a5ddff0914b217ef5284b372")


def test_codex_uninstall_of_a_changed_file_refiles_the_trust_of_hooks_that_move_up(
        tmp_path: Path, store_dir: Path) -> None:
    """Fixture: installed; then the user adds a trusted SessionStart hook after ours."""
    where = codex_target(tmp_path, {"hooks": {}})
    install(where, store_root=store_dir, program=PROGRAM)
    hooks = json.loads(where.hooks_file.read_bytes())
    hooks["hooks"]["SessionStart"].append(THEIR_HOOK)
    where.hooks_file.write_text(json.dumps(hooks, indent=2))
    path = os.path.realpath(where.hooks_file)
    config = where.home / "config.toml"
    config.write_text(config.read_text() + f'\n[hooks.state."{path}:session_start:1:0"]\n'
                                           'trusted_hash = "sha256:theirs"\n')
    uninstall(where, store_root=store_dir)
    left = json.loads(where.hooks_file.read_bytes())
    assert left["hooks"] == {"SessionStart": [THEIR_HOOK]}
    trust = codex_trust.trust_of(config.read_text())
    assert trust == {"/elsewhere/hooks.json:stop:0:0": {"trusted_hash": "sha256:0"},
                     f"{path}:session_start:0:0": {"trusted_hash": "sha256:theirs"}}


def test_status_says_installed_trusted_and_when_the_hooks_last_ran(tmp_path: Path,
                                                                   store_dir: Path) -> None:
    """Fixture: a Codex home; status before install, after install without trust, after runs."""
    where = codex_target(tmp_path)
    before = status(where, store_root=store_dir)
    assert before["installed"] is False and before["last_run"] is None
    assert set(before["events"].values()) == {"missing"}
    install(where, store_root=store_dir, program=PROGRAM, trust=False)
    untrusted = status(where, store_root=store_dir)
    assert untrusted["installed"] is True and untrusted["trusted"] is False
    assert set(untrusted["trust"].values()) == {"untrusted"}
    assert any("does not exist" in n for n in untrusted["notes"])  # PROGRAM is not on this machine
    note_run(store_dir, "codex", event="SessionStart", outcome="stopped", session_id="s")
    note_run(store_dir, "codex", event="PreToolUse", outcome="failed", session_id="s", note="boom")
    ran = status(where, store_root=store_dir)
    assert ran["last_run"]["event"] == "PreToolUse" and ran["calls"] == 2
    assert ran["last_failure"]["note"] == "boom"


def test_a_codex_project_install_says_codex_must_trust_the_project(tmp_path: Path,
                                                                   store_dir: Path) -> None:
    """Fixture: a project directory and a Codex home that does not trust it."""
    home = codex_target(tmp_path).home
    project = tmp_path / "proj"
    project.mkdir()
    where = target("codex", scope="project", project=str(project), config_dir=str(home))
    done = install(where, store_root=store_dir, program=PROGRAM)
    assert where.hooks_file == project / ".codex" / "hooks.json" and where.hooks_file.exists()
    assert any("trusted project" in note for note in done.notes)
    assert "projects" not in codex_trust.trust_of((home / "config.toml").read_text())
