"""`sessionkeeper hooks install | uninstall | status`: our entries in the agents' own config.

    claude  user:    $CLAUDE_CONFIG_DIR (or ~/.claude)/settings.json
            project: <project>/.claude/settings.json
    codex   user:    $CODEX_HOME (or ~/.codex)/hooks.json, trust in $CODEX_HOME/config.toml
            project: <project>/.codex/hooks.json, trust in $CODEX_HOME/config.toml

Merging keeps every other hook and setting (`entries`); installing twice changes nothing; the
first change of each file is backed up in the store and `uninstall` restores it byte for byte
when nobody changed it since (`backups`). Codex runs only trusted hooks: install trusts exactly
our entries (`codex_trust`, unless `trust=False`); Claude Code has no hook trust. With `mcp`, our
MCP server (`sessionkeeper mcp`) is registered too, under the same rules (`mcp_config`: Claude's
.claude.json or a project's .mcp.json, Codex's config.toml). These are the only writes Session
Keeper ever makes into an agent's config directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import AgentConfigInvalid, InvalidWorkspace
from . import backups, codex_trust, config_file, entries, mcp_config, state

_HOME = {"claude": ("CLAUDE_CONFIG_DIR", "~/.claude"), "codex": ("CODEX_HOME", "~/.codex")}
_DIR = {"claude": ".claude", "codex": ".codex"}
_FILE = {"claude": "settings.json", "codex": "hooks.json"}
_LOCK_WAIT_S = 30.0


@dataclass(frozen=True, kw_only=True)
class Target:
    """Where one agent's hooks go: its config home, and the project for project scope."""

    agent: str
    scope: str  # user | project
    home: Path
    project: Path | None = None
    home_named: bool = True  # the config dir came from a flag or the agent's env variable

    @property
    def hooks_file(self) -> Path:
        """The file our hook entries go into."""
        base = self.project / _DIR[self.agent] if self.project is not None else self.home
        return base / _FILE[self.agent]

    @property
    def trust_file(self) -> Path | None:
        """Codex's user config.toml, where hook trust is kept (None for Claude)."""
        return self.home / "config.toml" if self.agent == "codex" else None

    @property
    def mcp_file(self) -> Path:
        """Where the agent keeps its MCP servers for this scope (`mcp_config.mcp_file`)."""
        return mcp_config.mcp_file(self.agent, home=self.home, project=self.project,
                                   home_named=self.home_named)

    @property
    def key(self) -> str:
        """The name of this installation's manifest in the store."""
        digest = hashlib.sha256(str(self.hooks_file).encode()).hexdigest()[:16]
        return f"{self.agent}-{self.scope}-{digest}"


def target(agent: str, *, scope: str = "user", config_dir: str | None = None,
           project: str | None = None, env: Mapping[str, str] | None = None) -> Target:
    """The Target of `agent` (claude | codex) for a scope, from flags, else the agent's env."""
    if agent not in _HOME:
        raise InvalidWorkspace(f"unknown agent {agent!r}: expected claude or codex")
    if scope not in ("user", "project"):
        raise InvalidWorkspace(f"unknown scope {scope!r}: expected user or project")
    env = os.environ if env is None else env
    var, default = _HOME[agent]
    named = config_dir or (env.get(var) or "").split(",")[0].strip()
    home = Path(os.path.realpath(os.path.expanduser(named or default)))
    where = None
    if scope == "project":
        where = Path(os.path.realpath(project or os.getcwd()))
        if not where.is_dir():
            raise InvalidWorkspace(f"project {where} is not an existing directory")
    return Target(agent=agent, scope=scope, home=home, project=where, home_named=bool(named))


def found(agent: str, env: Mapping[str, str] | None = None) -> bool:
    """True when the agent seems to be on this machine (its config home or its executable)."""
    return target(agent, env=env).home.is_dir() or shutil.which(agent) is not None


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What install or uninstall did to one agent's config."""

    agent: str
    scope: str
    changed: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    backup: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """As JSON-able data."""
        return asdict(self)


def _commands(agent: str, *, program: list[str], store: str | None) -> dict[str, str]:
    return {event: entries.command_for(agent, event, program=program, store=store)
            for event in entries.EVENTS_OF[agent]}


def _our_trust(hooks_file: Path, config: dict[str, Any], agent: str) -> dict[str, str]:
    """{trust key: hash} of our groups as they stand in a hooks.json."""
    out = {}
    for event, positions in entries.ours(config, agent).items():
        if event in codex_trust.EVENT_KEYS:
            for n in positions:
                group = config["hooks"][event][n]
                out[codex_trust.trust_key(hooks_file, event, n)] = codex_trust.trust_hash(event, group)
    return out


@contextlib.contextmanager
def _one_at_a_time(where: Target, store_root: Path) -> Iterator[None]:
    """Hold the installation's lock in the store: two installs (or an install and an uninstall)
    racing would each save a manifest missing the other's backups, or overwrite them."""
    from filelock import FileLock, Timeout

    from ..errors import ThreadBusy
    from ..store.layout import ensure_private_dir

    ensure_private_dir(store_root)
    directory = ensure_private_dir(store_root / "hooks" / "installs", within=store_root)
    lock = FileLock(directory / f"{where.key}.lock", mode=0o600, thread_local=False)
    try:
        lock.acquire(timeout=_LOCK_WAIT_S)
    except Timeout:
        raise ThreadBusy(f"another `sessionkeeper hooks install|uninstall` of {where.hooks_file} "
                         f"has been running for {_LOCK_WAIT_S:g} s; try again") from None
    try:
        yield
    finally:
        lock.release()


def install(where: Target, *, store_root: Path, store: str | None = None,
            program: list[str] | None = None, trust: bool = True, mcp: bool = False) -> Outcome:
    """Merge our hook entries into the agent's config (idempotent; backed up first); with `mcp`,
    register our MCP server too."""
    with _one_at_a_time(where, store_root):
        return _install(where, store_root=store_root, store=store, program=program, trust=trust,
                        mcp=mcp)


def _install(where: Target, *, store_root: Path, store: str | None,
             program: list[str] | None, trust: bool, mcp: bool) -> Outcome:
    manifest = backups.Manifest.load(store_root, where.key)
    path = where.hooks_file
    before = backups.read(path)
    config = config_file.load_json(path, before)
    odd = [e for e in entries.EVENTS_OF[where.agent]
           if config.get("hooks", {}).get(e) is not None and not isinstance(config["hooks"][e], list)]
    if odd:  # merging would replace what is there
        raise AgentConfigInvalid(f"{path}: hooks.{odd[0]} is not a list of matcher groups; "
                                 "left as it is")
    if where.agent == "codex" and trust and where.trust_file is not None:  # refused before a write
        _toml_text(where.trust_file, backups.read(where.trust_file))
    server = mcp_config.argv_for(where.agent, program=program or entries.hook_program(), store=store)
    if mcp:  # refused before a write too
        mcp_config.merged(where.agent, where.mcp_file, backups.read(where.mcp_file), server)
    wanted = entries.merged(config, where.agent, _commands(
        where.agent, program=program or entries.thin_program(), store=store))
    changed, done = [], []
    if wanted != config:
        created = backups.missing_dirs(path)
        manifest.created_dirs += [str(d) for d in created if str(d) not in manifest.created_dirs]
        data = config_file.dump_json(wanted, before)  # before the backup: a refusal leaves none
        manifest.keep_original(path, before)
        config_file.write_config(path, data)
        manifest.left(path, data)
        changed.append(str(path))
        done.append(f"{'installed' if not entries.ours(config, where.agent) else 'updated'} "
                    f"{len(entries.EVENTS_OF[where.agent])} hooks in {path}")
    else:
        done.append(f"already installed in {path}")
    notes: list[str] = []
    if where.agent == "codex":
        done += _trust(where, wanted, manifest, changed, trust=trust)
        notes += _codex_notes(where)
    if mcp:
        done.append(mcp_config.register(where.agent, where.mcp_file, server, manifest=manifest,
                                        changed=changed))
        if where.agent == "claude" and where.project is not None:
            notes.append(f"Claude Code asks before it starts a project's MCP servers: approve "
                         f"{mcp_config.NAME} from {where.mcp_file} when it does")
    backup = manifest.backup_of(path)
    return Outcome(agent=where.agent, scope=where.scope, changed=changed, done=done,
                   backup=str(backup) if backup else (str(manifest.directory)
                                                      if manifest.exists else None), notes=notes)


def _trust(where: Target, config: dict[str, Any], manifest: backups.Manifest, changed: list[str],
           *, trust: bool) -> list[str]:
    trust_file = where.trust_file
    assert trust_file is not None
    if not trust:
        return ["hook trust left to you: review the hooks in Codex (/hooks) before they run"]
    ours = _our_trust(where.hooks_file, config, where.agent)
    before = backups.read(trust_file)
    text = _toml_text(trust_file, before)
    state_now = codex_trust.trust_of(text)
    if all(state_now.get(k, {}).get("trusted_hash") == h for k, h in ours.items()):
        return [f"our {len(ours)} hooks already trusted in {trust_file}"]
    data = codex_trust.with_trust(text, ours).encode()
    created = backups.missing_dirs(trust_file)
    manifest.created_dirs += [str(d) for d in created if str(d) not in manifest.created_dirs]
    manifest.keep_original(trust_file, before)
    config_file.write_config(trust_file, data)
    manifest.left(trust_file, data)
    changed.append(str(trust_file))
    return [f"trusted our {len(ours)} hooks in {trust_file} (as Codex's /hooks review does)"]


def _toml_text(trust_file: Path, data: bytes | None) -> str:
    """config.toml's text ("" when absent); AgentConfigInvalid when it is not UTF-8 TOML."""
    try:
        text = (data or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentConfigInvalid(f"{trust_file} is not UTF-8 text ({exc.reason} at byte "
                                 f"{exc.start}); left as it is") from None
    codex_trust.check(text)
    return text


def _shown(trust_file: Path) -> str:
    """config.toml's text for notes and status ("" when it is absent or cannot be read)."""
    try:
        return (backups.read(trust_file) or b"").decode("utf-8", "replace")
    except AgentConfigInvalid:
        return ""


def _codex_notes(where: Target) -> list[str]:
    text = _shown(where.trust_file) if where.trust_file else ""
    return codex_trust.notes_of(text, project=str(where.project) if where.project else None)


def uninstall(where: Target, *, store_root: Path) -> Outcome:
    """Take our entries out again: files nobody changed since are restored byte for byte."""
    with _one_at_a_time(where, store_root):
        return _uninstall(where, store_root=store_root)


def _uninstall(where: Target, *, store_root: Path) -> Outcome:
    manifest = backups.Manifest.load(store_root, where.key)
    path = where.hooks_file
    now = backups.read(path)
    config = config_file.load_json(path, now)
    edits: dict[Path, list[Callable[[bytes], bytes | None]]] = {
        path: [lambda data: _strip_json(path, data, where.agent)]}
    if where.trust_file is not None:
        keys, moves = set(_our_trust(path, config, where.agent)), _moves(path, config)
        trust_file = where.trust_file
        edits.setdefault(trust_file, []).append(lambda data: codex_trust.without_trust(
            _toml_text(trust_file, data), keys, moves=moves).encode())
    mcp_file = where.mcp_file
    edits.setdefault(mcp_file, []).append(lambda data: mcp_config.without(where.agent, mcp_file,
                                                                          data))
    done, changed = [], []
    for file, strips in edits.items():
        line = _undo(file, manifest, _chained(strips))
        if line is not None:
            done.append(line)
            changed.append(str(file))
    if not changed:
        done.append(f"nothing of ours in {path}")
    manifest.remove_created_dirs()
    manifest.discard()
    return Outcome(agent=where.agent, scope=where.scope, changed=changed, done=done)


def _chained(strips: list[Callable[[bytes], bytes | None]]) -> Callable[[bytes], bytes | None]:
    """One edit doing each of `strips` in turn (None when none of them changed anything)."""
    def strip(data: bytes) -> bytes | None:
        out: bytes | None = None
        for one in strips:
            done = one(out if out is not None else data)
            out = done if done is not None else out
        return out
    return strip


def _strip_json(path: Path, data: bytes, agent: str) -> bytes | None:
    """A hooks file without our groups (None when it holds none)."""
    config = config_file.load_json(path, data)
    if not entries.ours(config, agent):
        return None
    return config_file.dump_json(entries.without_ours(config, agent), data)


def _undo(file: Path, manifest: backups.Manifest,
          strip: Callable[[bytes], bytes | None]) -> str | None:
    """Restore one file from its backup when it holds what we left, else strip our entries."""
    if str(file) in manifest.files and manifest.unchanged_since_install(file):
        try:
            return manifest.restore(file)
        except OSError as exc:
            raise AgentConfigInvalid(f"{file} cannot be written ({exc.strerror or exc}); "
                                     "left as it is") from None
    now = backups.read(file)
    data = strip(now) if now is not None else None
    if data is None or data == now:
        return None
    config_file.write_config(file, data)
    return (f"removed our entries from {file} (it changed since the install, so only they were "
            "taken out)")


def _moves(path: Path, config: dict[str, Any]) -> dict[str, str]:
    """Trust keys of other groups that move up when ours are removed: {old key: new key}."""
    moves = {}
    for event, groups in (config.get("hooks") or {}).items():
        if event not in codex_trust.EVENT_KEYS or not isinstance(groups, list):
            continue
        new = 0
        for n, group in enumerate(groups):
            if entries.is_ours(group, "codex", event):
                continue
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h in range(len(handlers) if isinstance(handlers, list) else 0):
                if n != new:
                    moves[codex_trust.trust_key(path, event, n, h)] = \
                        codex_trust.trust_key(path, event, new, h)
            new += 1
    return moves


def status(where: Target, *, store_root: Path) -> dict[str, Any]:
    """Whether the hooks are installed (per event), trusted, and when they last ran."""
    path = where.hooks_file
    notes: list[str] = []
    try:
        config = config_file.load_json(path, backups.read(path), to_write=False)  # as the agent reads it
    except AgentConfigInvalid as exc:
        config, notes = {}, [str(exc)]
    mine = entries.ours(config, where.agent)
    events = {e: ("installed" if e in mine else "missing") for e in entries.EVENTS_OF[where.agent]}
    commands = sorted({config["hooks"][e][n]["hooks"][0]["command"]
                       for e, ns in mine.items() for n in ns})
    for command in commands:
        program, *rest = shlex.split(command)
        gone = [program] if not (os.path.isfile(program) and os.access(program, os.X_OK)) else []
        gone += [word for word in rest if word.endswith(entries.MAIN) and not os.path.isfile(word)]
        if gone:
            notes.append(f"the hook command {gone[0]} does not exist (moved virtualenv?): "
                         "run `sessionkeeper hooks install` again")
    trusted: bool | None = None
    trust: dict[str, str] = {}
    if where.agent == "codex":
        text = _shown(where.trust_file) if where.trust_file else ""
        stored = codex_trust.trust_of(text)
        for key, digest in _our_trust(path, config, where.agent).items():
            entry = stored.get(key) or {}
            trust[key] = ("disabled" if entry.get("enabled") is False else
                          "trusted" if entry.get("trusted_hash") == digest else
                          "modified" if entry.get("trusted_hash") else "untrusted")
        trusted = bool(trust) and all(v == "trusted" for v in trust.values())
        notes += codex_trust.notes_of(text, project=str(where.project) if where.project else None)
    elif config.get("disableAllHooks") is True:
        notes.append(f"disableAllHooks is true in {path}: Claude Code runs no hooks")
    runs = state.runs_of(store_root, where.agent)
    manifest = backups.Manifest.load(store_root, where.key)
    try:
        server = {"file": str(where.mcp_file), **mcp_config.registered(
            where.agent, where.mcp_file, backups.read(where.mcp_file))}
    except AgentConfigInvalid as exc:
        server = {"file": str(where.mcp_file), "registered": False, "ours": False,
                  "command": None, "note": str(exc)}
    return {"agent": where.agent, "scope": where.scope, "found": found(where.agent), "mcp": server,
            "config_dir": str(where.home), "hooks_file": str(path),
            "installed": bool(mine) and all(v == "installed" for v in events.values()),
            "events": events, "commands": commands, "trusted": trusted, "trust": trust,
            "last_run": runs.get("last"), "last_failure": runs.get("last_failure"),
            "calls": runs.get("calls", 0),
            "backup": str(manifest.directory) if manifest.exists else None, "notes": notes}
