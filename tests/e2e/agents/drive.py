"""Run the real Codex CLI and Claude Code against the fake model APIs, in throwaway homes.

Each `Driver` owns a scratch dir with its own HOME, agent root (CODEX_HOME / CLAUDE_CONFIG_DIR)
and a real git repository on `feature/sk-test`; the agent reaches only the fake server on
127.0.0.1. Every subprocess has a timeout; the agents are installed by install.sh beside this file
(pinned versions, cached under ${XDG_CACHE_HOME:-~/.cache}/sessionkeeper-agents).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import git, init_repo
from tests.e2e.agents.fake_models import FakeModel
from tests.e2e.agents.seed_editor import session_of

HERE = Path(__file__).resolve().parent
RUN_TIMEOUT = 180
BRANCH = "feature/sk-test"


def install(agent: str) -> Path:
    """Install (or reuse) the pinned agent CLI; return its executable. Fails loudly, never skips."""
    version = os.environ.get(f"SK_{agent.upper()}_VERSION", "")
    out = subprocess.run(["bash", str(HERE / "install.sh"), agent, *([version] if version else [])],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"install.sh {agent} failed:\n{out.stderr[-3000:]}")
    return Path(out.stdout.strip().splitlines()[-1])


def version_of(exe: Path) -> str:
    """What `<agent> --version` prints."""
    return subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60,
                          check=True).stdout.strip()


class Driver:
    """One agent, one scratch home, one repository; start, resume, or crash a session."""

    def __init__(self, agent: str, exe: Path, scratch: Path, fake: FakeModel) -> None:
        self.agent, self.exe, self.fake = agent, exe, fake
        self.home = scratch / "home"
        self.root = scratch / ("codexhome" if agent == "codex" else "claudecfg")
        self.repo = scratch / "repo"
        self.home.mkdir(parents=True)
        self.root.mkdir()
        init_repo(self.repo, {"README": "base\n"}, message="init")
        (self.repo / "README").write_text("base\ntwo\n")
        git(self.repo, "commit", "-qam", "second")
        git(self.repo, "checkout", "-q", "-b", BRANCH)
        if agent == "codex":
            (self.root / "config.toml").write_text(
                'model = "gpt-5"\nmodel_provider = "fake"\napproval_policy = "never"\n'
                'sandbox_mode = "danger-full-access"\n\n[model_providers.fake]\nname = "fake"\n'
                f'base_url = "http://127.0.0.1:{fake.port}/v1"\nwire_api = "responses"\n'
                'env_key = "FAKE_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n')
        self.session_id: str | None = None
        self.allowed_tools = ["Bash"]  # Claude Code -p: the tools it may call without asking
        self.extra_env: dict[str, str] = {}

    def env(self) -> dict[str, str]:
        """A clean environment: the throwaway home and root, the fake server, nothing else."""
        node = shutil.which("node")
        path = ":".join(dict.fromkeys([os.path.dirname(node) if node else "/usr/local/bin",
                                       "/usr/local/bin", "/usr/bin", "/bin"]))
        env = {"PATH": path, "HOME": str(self.home), "TERM": "dumb", "LANG": "C.UTF-8"}
        if self.agent == "codex":
            env.update(CODEX_HOME=str(self.root), FAKE_KEY="dummy")
        else:
            env.update(CLAUDE_CONFIG_DIR=str(self.root), ANTHROPIC_BASE_URL=f"http://127.0.0.1:{self.fake.port}",
                       ANTHROPIC_API_KEY="sk-ant-dummy", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                       DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1")
        return {**env, **self.extra_env}

    def args(self, prompt: str, *, resume: bool) -> list[str]:
        """The command line of one non-interactive run (a new session, or a resume of ours)."""
        if self.agent == "codex":
            flags = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json"]
            if resume:
                return [str(self.exe), "exec", "resume", *flags, str(self.session_id), prompt]
            return [str(self.exe), "exec", *flags, prompt]
        again = ["--resume", str(self.session_id)] if resume else []
        return [str(self.exe), "-p", *again, prompt, "--output-format", "json",
                "--allowedTools", *self.allowed_tools]

    def run(self, prompt: str, *, resume: bool = False) -> str:
        """Run the agent to the end; return its stdout. A non-zero exit raises with its stderr."""
        out = subprocess.run(self.args(prompt, resume=resume), cwd=self.repo, env=self.env(),
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        if out.returncode != 0:
            raise RuntimeError(f"{self.agent} exited {out.returncode}:\n{out.stderr[-3000:]}\n"
                               f"{out.stdout[-2000:]}")
        if self.session_id is None:
            self.session_id = session_of(self.agent, out.stdout)
        return out.stdout

    def session_of_transcript(self) -> str:
        """The session id the agent's only transcript is named after (after a crash, say)."""
        return self.transcript().name.removesuffix(".jsonl")[-36:]

    def transcript(self) -> Path:
        """The session's log file, as the agent wrote it."""
        pattern = "sessions/**/rollout-*.jsonl" if self.agent == "codex" else "projects/*/*.jsonl"
        found = sorted(self.root.glob(pattern))
        if len(found) != 1:
            raise RuntimeError(f"expected one transcript under {self.root}, found {found}")
        return found[0]

    def crash_inside_a_tool_call(self, command: str, *, timeout: float = 90,
                                 ready: Callable[[str], bool] | None = None) -> str:
        """Start a session whose tool call runs `command`; kill -9 the agent once the call is logged
        (in the agent's log, or once `ready(call id)` says so).

        Returns the call id the fake server handed out.
        """
        logged = ready or self._logged
        before = len(self.fake.calls)
        proc = subprocess.Popen(self.args(f"Run it.\nRUN: {command}", resume=False), cwd=self.repo,
                                env=self.env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if len(self.fake.calls) > before and logged(self.fake.calls[before]):
                    # the tool may run in a session of its own: its processes are ours to end too
                    tree = _descendants(proc.pid)
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)
                    for pid in tree:
                        _kill(pid)
                    return self.fake.calls[before]
                if proc.poll() is not None:
                    raise RuntimeError(f"{self.agent} exited {proc.returncode} before the call was logged")
                time.sleep(0.05)
            raise RuntimeError(f"the tool call never reached the {self.agent} log in {timeout}s")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)

    def _logged(self, call_id: str) -> bool:
        pattern = "sessions/**/rollout-*.jsonl" if self.agent == "codex" else "projects/*/*.jsonl"
        return any(call_id.encode() in p.read_bytes() for p in self.root.glob(pattern))


def _descendants(root: int) -> list[int]:
    """Every live process descended from `root` (read from /proc), deepest last."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
