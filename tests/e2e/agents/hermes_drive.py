"""Run the real Hermes Agent (from PyPI, pinned, its own virtualenv) against the fake Anthropic API.

A `HermesDriver` owns a scratch dir with its own HOME, HERMES_HOME (config.yaml pointing Hermes
at the fake server on 127.0.0.1, its tirith download and update check off) and a real git
repository on `feature/sk-test`. `run()` is the terminal: `hermes chat -q … -Q` (one-shot, prints
`session_id: …`), `--resume <id>` to continue one. `chat()` is one messaging-platform turn through
Hermes's own gateway session code (`hermes_chat_turn.py`), optionally under `faketime` so a turn
can happen "yesterday" and a reset boundary lie between it and now. Every subprocess has a timeout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.conftest import git, init_repo
from tests.e2e.agents.fake_models import FakeModel

HERE = Path(__file__).resolve().parent
RUN_TIMEOUT = 240
BRANCH = "feature/sk-test"
_SESSION = re.compile(r"session_id: ([A-Za-z0-9_.:-]+)")


_FAKETIME_ATTEMPTS = 3
"""Attempts of a turn under faketime: libfaketime's clock interception now and then crashes
Python here (a segmentation fault at start, or EINVAL from time.sleep's clock_nanosleep: 4 times
in about 25 turns on 2026-12-03, in bursts); the turn is then run again from a copy of the home
taken before it."""


def _faketime_crash(stderr: str) -> bool:
    """True for the ways libfaketime's interception ends a Python process (never Hermes's own)."""
    return "Caught Segmentation fault" in stderr or "[Errno 22] Invalid argument" in stderr


def faketime() -> str:
    """The faketime executable (Debian's `faketime`, installed by tests/faults/install-fault-tools.sh)."""
    found = shutil.which("faketime")
    if found is None:
        raise RuntimeError("faketime is not installed: run tests/faults/install-fault-tools.sh")
    return found


class HermesDriver:
    """One Hermes home, one repository; terminal sessions and chat turns."""

    def __init__(self, exe: Path, scratch: Path, fake: FakeModel, *, version: str,
                 reset: dict[str, Any] | None = None, hooks_store: Path | None = None) -> None:
        self.exe, self.fake = exe, fake
        self.home = scratch / "home"
        self.root = scratch / "hermeshome"
        self.repo = scratch / "repo"
        self.home.mkdir(parents=True)
        self.root.mkdir()
        init_repo(self.repo, {"README": "base\n"}, message="init")
        git(self.repo, "checkout", "-q", "-b", BRANCH)
        policy = reset or {"mode": "both", "at_hour": 4, "idle_minutes": 60}
        (self.root / "config.yaml").write_text(
            "model:\n  provider: custom\n"
            f"  base_url: http://127.0.0.1:{fake.port}\n"
            "  api_mode: anthropic_messages\n  default: claude-fake\n  api_key: sk-fake\n"
            "  context_length: 200000\n"
            "security:\n  tirith_enabled: false\n"
            "session_reset:\n" + "".join(f"  {k}: {v}\n" for k, v in policy.items())
            + (_hooks(hooks_store) if hooks_store is not None else ""))
        # Hermes checks PyPI for a newer release at most every 6 hours: say it just did
        (self.root / ".update_check").write_text(json.dumps(
            {"ts": time.time(), "behind": 0, "rev": None, "ver": version}))

    def env(self) -> dict[str, str]:
        """The environment Hermes runs in: throwaway HOME and HERMES_HOME, no proxies, no keys."""
        keep = {k: v for k, v in os.environ.items()
                if k in ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM")}
        return {**keep, "HOME": str(self.home), "HERMES_HOME": str(self.root), "NO_COLOR": "1",
                "NO_PROXY": "127.0.0.1,localhost"}

    def run(self, prompt: str, *, resume: str | None = None, cwd: Path | None = None,
            flags: tuple[str, ...] = ()) -> str:
        """`hermes chat -q PROMPT -Q --yolo [--resume ID] FLAGS` in the repository (or `cwd`); the
        session id it printed."""
        argv = [str(self.exe), "chat", "-q", prompt, "-Q", "--yolo", *flags]
        if resume:
            argv += ["--resume", resume]
        out = subprocess.run(argv, cwd=cwd or self.repo, env=self.env(), capture_output=True, text=True,
                             timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
        found = _SESSION.findall(out.stdout + "\n" + out.stderr)  # Hermes prints it on stderr
        if out.returncode != 0 or not found:
            raise RuntimeError(f"hermes failed ({out.returncode}):\n{out.stdout[-2000:]}\n"
                               f"{out.stderr[-3000:]}")
        return found[-1]

    def chat(self, text: str, *, chat_id: str = "4242", platform: str = "telegram",
             chat_type: str = "dm", user_id: str = "777", shift: str | None = None) -> dict[str, Any]:
        """One gateway turn of a chat (`shift`: a faketime offset such as "-1d"); what it printed."""
        python = self.exe.parent / "python"
        argv = [str(python), str(HERE / "hermes_chat_turn.py"), json.dumps(
            {"platform": platform, "chat_id": chat_id, "chat_type": chat_type, "user_id": user_id,
             "user_name": "alice", "text": text})]
        env = self.env()
        if shift:
            argv = [faketime(), "-f", shift, *argv]
            env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        before = self.root.parent / "hermeshome.before"
        if shift:  # the home as it was before the turn, to start a crashed turn again from
            shutil.rmtree(before, ignore_errors=True)
            shutil.copytree(self.root, before, symlinks=True)
        for attempt in range(_FAKETIME_ATTEMPTS if shift else 1):
            if attempt:
                shutil.rmtree(self.root)
                shutil.copytree(before, self.root, symlinks=True)
            out = subprocess.run(argv, cwd=self.repo, env=env, capture_output=True, text=True,
                                 timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
            if out.returncode == 0 or not (shift and _faketime_crash(out.stderr)):
                break
        if out.returncode != 0:
            raise RuntimeError(f"hermes chat turn failed ({out.returncode}):\n{out.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
        return result


def _hooks(store: Path) -> str:
    """config.yaml's `hooks:` block running our Hermes hook (this interpreter) on `store`."""
    import sys

    lines = ["hooks_auto_accept: true\n", "hooks:\n"]
    for event in ("pre_llm_call", "pre_tool_call"):
        command = f"{sys.executable} -m sessionkeeper hook --store {store} hermes {event}"
        lines += [f"  {event}:\n", f"    - command: \"{command}\"\n", "      timeout: 60\n"]
    return "".join(lines)
