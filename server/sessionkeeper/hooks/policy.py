"""The hook policy of a repository or a user: warn (default), block-on-drift, or off.

    warn            drift → the model and the user are told what differs; the session continues
    block-on-drift  drift is stopped like a block (Codex stops, Claude's first prompt is blocked)
    off             the hooks do nothing (nothing is recorded or answered; a resume may have
                    read its digest while the policy was looked up, and nothing comes of it)

Where it is set, first match wins: $SESSIONKEEPER_HOOK_POLICY; the git config key
`sessionkeeper.hookPolicy` as git resolves it in the hook's cwd (the repository's .git/config,
then the user's ~/.gitconfig — `git config [--global] sessionkeeper.hookPolicy off`); else warn.
An unknown value counts as warn, with a note saying so (a typo never blocks anyone).
"""

from __future__ import annotations

import os

from .spawn import git

TYPE_CHECKING = False  # standard library only: a resume its digest proves ok runs in a thin process
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal

    Policy = Literal["warn", "block-on-drift", "off"]

POLICIES: tuple[str, ...] = ("warn", "block-on-drift", "off")
ENV_POLICY = "SESSIONKEEPER_HOOK_POLICY"
GIT_KEY = "sessionkeeper.hookPolicy"


class Setting:
    """The policy in force, where it was set (env, git, default), and a note when the setting
    was not understood."""

    __slots__ = ("policy", "source", "note")

    def __init__(self, policy: Policy, source: str, note: str | None = None) -> None:
        self.policy = policy
        self.source = source
        self.note = note


def _setting(raw: str, source: str) -> Setting:
    value = raw.strip().lower()
    if value in POLICIES:
        return Setting(value, source)  # type: ignore[arg-type]  # checked just above
    return Setting("warn", source, f"unknown hook policy {raw.strip()[:40]!r} in {source}: "
                                   f"using warn (expected one of {', '.join(POLICIES)})")


def policy_for(cwd: str, env: dict[str, str] | None = None) -> Setting:
    """The policy in force for a hook running in `cwd`."""
    return policy_started(cwd, env)()


def policy_started(cwd: str, env: dict[str, str] | None = None) -> Callable[[], Setting]:
    """Start finding the policy for a hook in `cwd`; the call returned waits for it (`git config`
    runs meanwhile, so a hook can read what it needs before it knows whether to act)."""
    env = dict(os.environ) if env is None else env
    if env.get(ENV_POLICY, "").strip():
        found = _setting(env[ENV_POLICY], ENV_POLICY)
        return lambda: found
    where = cwd if os.path.isdir(cwd) else os.path.expanduser("~")
    pending = git(where, "config", "--get", GIT_KEY)

    def setting() -> Setting:
        status, out = pending.result()
        value = out.decode("utf-8", "surrogateescape").strip() if status == 0 else ""
        return _setting(value, f"git config {GIT_KEY}") if value else Setting("warn", "default")
    return setting


def set_policy(policy: str, *, repo: str | None = None) -> str:
    """Set the policy of a repository (`repo`) or of the user (None); returns where it was set.

    The one git command here that writes (gitrun only reads): `git config --local|--global`.
    """
    import subprocess

    from ..errors import InvalidEvent, InvalidWorkspace
    from ..recovery import gitrun

    if policy not in POLICIES:
        raise InvalidEvent(f"unknown hook policy {policy!r}: expected one of {', '.join(POLICIES)}")
    scope = "--local" if repo is not None else "--global"
    where = os.path.realpath(repo) if repo is not None else os.path.expanduser("~")
    try:
        done = subprocess.run(["git", "config", scope, GIT_KEY, policy], cwd=where,
                              capture_output=True, text=True, check=False, timeout=30,
                              env=gitrun.environment({}))
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InvalidWorkspace(f"git config {scope} {GIT_KEY} could not run in {where}: {exc}") from None
    if done.returncode != 0:
        raise InvalidWorkspace(f"git config {scope} {GIT_KEY} failed in {where}: "
                               f"{done.stderr.strip()[:200]}")
    return f"git config {scope} in {where}" if repo is not None else "git config --global"
