"""`hooks install | uninstall | status` on real config files in throwaway config dirs: merged
without touching other hooks, idempotent, backed up, Codex trust, restored byte for byte."""

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
from sessionkeeper.hooks import codex_trust, entries
from sessionkeeper.hooks.install import Target, install, status, target, uninstall
from sessionkeeper.hooks.state import note_run
from tests.faults.conftest import unavailable

PROGRAM = ["/opt/sk/bin/sessionkeeper"]
THEIR_HOOK = {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/their-guard",
                                            "timeout": 5}]}
CLAUDE_SETTINGS = (b'{\n    "model": "opus",\n    "permissions": {"allow": ["Bash(ls)"]},\n'
                   b'    "hooks": {"PreToolUse": [' + json.dumps(THEIR_HOOK).encode() + b']}\n}')
CODEX_CONFIG = (b'# my codex\nmodel = "gpt-5"  # keep\n\n[model_providers.fake]\nname = "fake"\n\n'
                b'[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:0"\n')


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _claude(tmp_path: Path, settings: bytes | None = CLAUDE_SETTINGS) -> Target:
    home = tmp_path / "claudecfg"
    home.mkdir()
    if settings is not None:
        (home / "settings.json").write_bytes(settings)
    return target("claude", config_dir=str(home))


def _codex(tmp_path: Path, hooks: dict[str, object] | None = None) -> Target:
    home = tmp_path / "codexhome"
    home.mkdir()
    (home / "config.toml").write_bytes(CODEX_CONFIG)
    if hooks is not None:
        (home / "hooks.json").write_text(json.dumps(hooks, indent=2))
    return target("codex", config_dir=str(home))


def test_claude_install_merges_our_hooks_and_keeps_every_other_setting(tmp_path: Path,
                                                                      store_dir: Path) -> None:
    """Fixture: a settings.json with a model, permissions and another tool's PreToolUse hook."""
    where = _claude(tmp_path)
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
    for where in (_claude(tmp_path), _codex(tmp_path)):
        install(where, store_root=store_dir, program=PROGRAM)
        after_first = _tree(where.home)
        again = install(where, store_root=store_dir, program=PROGRAM)
        assert again.changed == [] and _tree(where.home) == after_first
        assert any("already" in line for line in again.done)


def test_a_moved_installation_updates_our_entries_in_place(tmp_path: Path, store_dir: Path) -> None:
    """Fixture: installed with one program path, then with another (a new virtualenv)."""
    where = _claude(tmp_path)
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
    where = _claude(tmp_path)
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
    where = _claude(tmp_path) if agent == "claude" else _codex(tmp_path, {"hooks": {
        "Stop": [THEIR_HOOK]}})
    before = _tree(where.home)
    install(where, store_root=store_dir, program=PROGRAM, store="/my/store")
    assert _tree(where.home) != before
    done = uninstall(where, store_root=store_dir)
    assert _tree(where.home) == before
    assert all("byte for byte" in line for line in done.done)
    assert not (store_dir / "hooks" / "installs" / where.key).exists()


def test_uninstall_removes_files_and_directories_the_install_created(tmp_path: Path,
                                                                     store_dir: Path) -> None:
    """Fixture: a Claude home without settings.json; a project without .claude/ (project scope)."""
    where = _claude(tmp_path, settings=None)
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
    where = _claude(tmp_path)
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
    where = _claude(tmp_path)
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
    where = _codex(tmp_path, {"hooks": {"SessionStart": [THEIR_HOOK]}})
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
    where = _codex(tmp_path, {"hooks": {}})
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
    where = _codex(tmp_path)
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


def test_an_unreadable_config_is_refused_and_left_exactly_as_it_is(tmp_path: Path,
                                                                  store_dir: Path) -> None:
    """Fixture: a settings.json that is not JSON; a config.toml that is not TOML."""
    broken = b'{"hooks": {"SessionStart": [}'
    where = _claude(tmp_path, settings=broken)
    with pytest.raises(AgentConfigInvalid, match="not valid JSON"):
        install(where, store_root=store_dir, program=PROGRAM)
    assert where.hooks_file.read_bytes() == broken
    codex = _codex(tmp_path)
    (codex.home / "config.toml").write_bytes(b"model = = \n")
    with pytest.raises(AgentConfigInvalid, match="not valid TOML"):
        install(codex, store_root=store_dir, program=PROGRAM)
    assert (codex.home / "config.toml").read_bytes() == b"model = = \n"


def test_a_codex_project_install_says_codex_must_trust_the_project(tmp_path: Path,
                                                                   store_dir: Path) -> None:
    """Fixture: a project directory and a Codex home that does not trust it."""
    home = _codex(tmp_path).home
    project = tmp_path / "proj"
    project.mkdir()
    where = target("codex", scope="project", project=str(project), config_dir=str(home))
    done = install(where, store_root=store_dir, program=PROGRAM)
    assert where.hooks_file == project / ".codex" / "hooks.json" and where.hooks_file.exists()
    assert any("trusted project" in note for note in done.notes)
    assert "projects" not in codex_trust.trust_of((home / "config.toml").read_text())


@pytest.mark.parametrize("toml", [b"model = = \n", b'model = "gpt-5" # caf\xe9\n',
                                  b"hooks = { }\n", b"[hooks]\nstate = { }\n",
                                  b"[[hooks]]\nx = 1\n", b'hooks = "x"\n'],
                         ids=["not TOML", "not UTF-8", "inline hooks", "inline state",
                              "array of hooks", "hooks a string"])
def test_a_codex_install_refused_for_its_config_toml_changes_no_file(toml: bytes, tmp_path: Path,
                                                                     store_dir: Path) -> None:
    """Fixture: a Codex home whose config.toml cannot be edited: not TOML, not UTF-8, or TOML
    with a `hooks` key of a shape trust tables cannot be added to (inline, an array, a string)."""
    codex = _codex(tmp_path)
    (codex.home / "config.toml").write_bytes(toml)
    before = _tree(codex.home)
    with pytest.raises(AgentConfigInvalid, match="config.toml"):
        install(codex, store_root=store_dir, program=PROGRAM)
    assert _tree(codex.home) == before and not codex.hooks_file.exists()
    assert not (store_dir / "hooks" / "installs" / codex.key).exists()  # no manifest, no backup


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_config_that_is_a_symlink_stays_one_and_its_target_is_restored_byte_for_byte(
        agent: str, tmp_path: Path, store_dir: Path) -> None:
    """Fixture: the agent's config files are symlinks into a dotfiles directory (as dotfile
    managers leave them); install, then uninstall."""
    where = _claude(tmp_path) if agent == "claude" else _codex(tmp_path, hooks={"hooks": {}})
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    links = [where.hooks_file] + ([where.trust_file] if where.trust_file else [])
    for link in links:
        (dotfiles / link.name).write_bytes(link.read_bytes())
        link.unlink()
        link.symlink_to(dotfiles / link.name)
    before = _tree(dotfiles)
    install(where, store_root=store_dir, program=PROGRAM)
    assert all(link.is_symlink() for link in links)
    assert set(entries.ours(json.loads((dotfiles / where.hooks_file.name).read_bytes()), agent)) \
        == set(entries.EVENTS_OF[agent])
    assert sorted(p.name for p in where.home.iterdir()) == sorted(link.name for link in links)
    uninstall(where, store_root=store_dir)
    assert all(link.is_symlink() for link in links)
    assert _tree(dotfiles) == before


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
    before = _tree(home)
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
    assert _tree(home) == before



def test_a_hooks_event_that_is_not_a_list_is_refused_and_left_as_it_is(tmp_path: Path,
                                                                       store_dir: Path) -> None:
    """Fixture: a settings.json whose SessionStart hooks are one object, not a list of groups."""
    settings = json.dumps({"hooks": {"SessionStart": THEIR_HOOK}}).encode()
    where = _claude(tmp_path, settings=settings)
    with pytest.raises(AgentConfigInvalid, match="SessionStart"):
        install(where, store_root=store_dir, program=PROGRAM)
    assert where.hooks_file.read_bytes() == settings


def test_a_config_that_cannot_be_read_is_refused_with_a_typed_error(tmp_path: Path,
                                                                    store_dir: Path) -> None:
    """Fixture: a Claude home whose settings.json is a directory (read fails with EISDIR, as a
    root-owned 0600 file fails with EACCES); install, status and uninstall."""
    where = _claude(tmp_path, settings=None)
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
    home = _claude(tmp_path).home
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
