"""Seed the editor's e2e with one real agent session: the real Codex CLI or Claude Code, one prompt
whose model reply is one shell call, against our fake model server on 127.0.0.1.

    python -m tests.e2e.agents.seed_editor AGENT --exe PATH --cwd REPO --root DIR --home DIR

AGENT is codex or claude; `--root` is the agent's own folder (CODEX_HOME / CLAUDE_CONFIG_DIR) and
`--home` its HOME, both folders of the run (never the machine's ~/.codex or ~/.claude). The tool
call only reads (`cat README.md`), so the repository is left as it was. Prints one JSON line:
{"agent", "session_id", "transcript", "title"}. Stdlib and fake_models only (no pytest), so any
interpreter that runs the server runs this; every subprocess has a timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.agents.fake_models import FakeModel

RUN_TIMEOUT = 180
API = {"codex": "openai", "claude": "anthropic"}
PROMPT = {"codex": "Codex e2e: read the README\nRUN: cat README.md",
          "claude": "Claude e2e: read the README\nRUN: cat README.md"}


@dataclass(frozen=True, kw_only=True)
class Seeded:
    """One finished session, as the agent wrote it."""

    agent: str
    session_id: str
    transcript: str
    title: str


def codex_config(port: int) -> str:
    """Codex's config.toml: the fake provider on `port`, no approvals, no retries."""
    return ('model = "gpt-5"\nmodel_provider = "fake"\napproval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n\n[model_providers.fake]\nname = "fake"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
            'env_key = "FAKE_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n')


def agent_env(agent: str, *, root: Path, home: Path, port: int) -> dict[str, str]:
    """A clean environment: the run's home and agent folder, the fake server, nothing else."""
    node = shutil.which("node")
    path = ":".join(dict.fromkeys([os.path.dirname(node) if node else "/usr/local/bin",
                                   "/usr/local/bin", "/usr/bin", "/bin"]))
    env = {"PATH": path, "HOME": str(home), "TERM": "dumb", "LANG": "C.UTF-8"}
    if agent == "codex":
        env.update(CODEX_HOME=str(root), FAKE_KEY="dummy")
    else:
        env.update(CLAUDE_CONFIG_DIR=str(root), ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
                   ANTHROPIC_API_KEY="sk-ant-dummy", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1")
    return env


def agent_args(agent: str, exe: Path, prompt: str) -> list[str]:
    """The command line of one non-interactive run that starts a new session."""
    if agent == "codex":
        return [str(exe), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                "--json", prompt]
    return [str(exe), "-p", prompt, "--output-format", "json", "--allowedTools", "Bash"]


def session_of(agent: str, stdout: str) -> str:
    """The new session's id, from what the agent printed."""
    if agent == "claude":
        return str(json.loads(stdout)["session_id"])
    for line in stdout.splitlines():
        event = json.loads(line) if line.startswith("{") else {}
        if event.get("type") == "thread.started":
            return str(event["thread_id"])
    raise RuntimeError(f"no thread.started in codex output: {stdout[:500]}")


def seed(agent: str, *, exe: Path, cwd: Path, root: Path, home: Path) -> Seeded:
    """Run one real session of `agent` in `cwd`; fail loudly unless its one tool call ran."""
    root.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    with FakeModel(API[agent]) as fake:
        if agent == "codex":
            config = root / "config.toml"  # hooks install may have written its trust here already
            old = config.read_text() if config.exists() else ""
            config.write_text(codex_config(fake.port) + ("\n" + old if old else ""))
        done = subprocess.run(agent_args(agent, exe, PROMPT[agent]), cwd=cwd, stdin=subprocess.DEVNULL,
                              env=agent_env(agent, root=root, home=home, port=fake.port),
                              capture_output=True, text=True, timeout=RUN_TIMEOUT)
        if done.returncode != 0:
            raise RuntimeError(f"{agent} exited {done.returncode}:\n{done.stderr[-3000:]}\n"
                               f"{done.stdout[-2000:]}")
        if len(fake.calls) != 1:
            raise RuntimeError(f"{agent} made {len(fake.calls)} tool calls, expected 1")
        session = session_of(agent, done.stdout)
    pattern = "sessions/**/rollout-*.jsonl" if agent == "codex" else "projects/*/*.jsonl"
    found = [p for p in sorted(root.glob(pattern)) if session in p.name]
    if len(found) != 1 or fake.calls[0].encode() not in found[0].read_bytes():
        raise RuntimeError(f"the {agent} transcript of {session} with its tool call is not under "
                           f"{root}: {found}")
    return Seeded(agent=agent, session_id=session, transcript=str(found[0]),
                  title=PROMPT[agent].splitlines()[0])


def main(argv: list[str] | None = None) -> int:
    """Command line: seed one session, print it as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("agent", choices=sorted(API))
    parser.add_argument("--exe", type=Path, required=True, help="the agent CLI (from install.sh)")
    parser.add_argument("--cwd", type=Path, required=True, help="the git repository to run in")
    parser.add_argument("--root", type=Path, required=True, help="CODEX_HOME / CLAUDE_CONFIG_DIR")
    parser.add_argument("--home", type=Path, required=True, help="the agent's HOME")
    args = parser.parse_args(argv)
    seeded = seed(args.agent, exe=args.exe, cwd=args.cwd, root=args.root, home=args.home)
    print(json.dumps(seeded.__dict__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
