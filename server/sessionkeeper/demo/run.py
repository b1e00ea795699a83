"""The demo's storyline: project, agent session, kill -9, drift next day, resume, stale verifier."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

from ..api import Keeper
from ..errors import InvalidWorkspace
from ..recovery.report import Report
from ..render import colour_enabled, paint, report_text
from .project import create, git


class Story:
    """Prints the sections (or collects them for --json)."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.colour = colour_enabled() and not as_json
        self.steps: list[dict[str, Any]] = []

    def section(self, number: int, title: str) -> None:
        """Start a numbered section."""
        self.steps.append({"step": number, "title": title})
        self.say("\n" + paint(f"{number}  {title}", "bold", on=self.colour))

    def say(self, text: str = "") -> None:
        """Print a line (not in --json mode)."""
        if not self.as_json:
            print(text, flush=True)

    def note(self, **fields: Any) -> None:
        """Attach data to the current step."""
        self.steps[-1].update(fields)



def _run_agent(store: Path, repo: Path, story: Story) -> dict[str, Any]:
    """Start the scripted agent, follow its steps, kill -9 it inside its tool call."""
    command = [sys.executable, "-m", "sessionkeeper.demo.agent", str(store), str(repo)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    seen: dict[str, Any] = {}
    for line in child.stdout:  # type: ignore[union-attr]
        event = orjson.loads(line)
        seen[event["step"]] = event
        if event["step"] == "started":
            story.say(f"   session {event['session_id']} of thread {event['thread_id']} "
                      f"(pid {event['pid']})")
            story.say("   recorded: user message · permissions on-request / workspace-write / "
                      "coding · model gpt-5")
        elif event["step"] == "edited":
            story.say(f"   agent edited {', '.join(event['files'])} · todos 1/3 done · cost per turn")
        elif event["step"] == "tested":
            story.say(f"   ran the tests for real: {event['passed']}/{event['total']} passed "
                      "(verifier checkpoint)")
        elif event["step"] == "operation_started":
            story.say(f"   tool call {event['operation_id']} (./deploy.sh staging) recorded as started ...")
            break
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    seen["exit"] = child.returncode
    return seen


def _check(store: Path, thread: str, repo: Path) -> tuple[int, dict[str, Any]]:
    """Run the real headless CLI: `sessionkeeper --check-resume THREAD --workspace REPO --json`."""
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "--check-resume", thread,
                           "--workspace", str(repo), "--store", str(store), "--json"],
                          capture_output=True, text=True)
    return done.returncode, orjson.loads(done.stdout)


def _indent(text: str) -> str:
    return "\n".join("   " + line if line else "" for line in text.splitlines())


def run_demo(*, directory: str | None = None, as_json: bool = False) -> int:
    """Tell the story; returns 0 when every step came out as it should."""
    story = Story(as_json)
    scratch = Path(directory or tempfile.mkdtemp(prefix="sessionkeeper-demo-")).resolve()
    store, repo = scratch / "store", scratch / "repo-a"
    if repo.exists() or store.exists():
        raise InvalidWorkspace(f"{scratch} already holds a demo: give a new --dir (or remove it)")
    story.say(paint("Session Keeper demo", "bold", on=story.colour)
              + f" — scratch directory {scratch} (kept)")

    story.section(1, "A project on branch fix/payment")
    create(repo)
    story.say(f"   {repo}: payment.py, test_payment.py (a rounding bug); "
              "fix/payment is 1 commit ahead of main")
    story.note(repo=str(repo), store=str(store), scratch=str(scratch))

    story.section(2, "An agent session, recorded by a separate process")
    seen = _run_agent(store, repo, story)
    thread = seen["started"]["thread_id"]
    story.note(thread_id=thread, session_id=seen["started"]["session_id"],
               tests=[seen["tested"]["passed"], seen["tested"]["total"]])

    story.section(3, "Crash: the agent process is killed with SIGKILL inside its tool call")
    rollout = Path(seen["started"]["path"])
    story.say(f"   kill -9 {seen['started']['pid']} → exit {seen['exit']}; rollout {rollout.name} "
              f"({rollout.stat().st_size} bytes) is all that is left")
    story.note(killed_exit=seen["exit"], rollout=str(rollout))

    story.section(4, "Next day, elsewhere: `git stash && git checkout main`, then --check-resume")
    git(repo, "stash", "push", "-q", "-m", "agent edits")
    git(repo, "checkout", "-q", "main")
    code, report = _check(store, thread, repo)
    story.say(_indent(report_text(Report.from_json(report), colour=story.colour)))
    story.say(f"   exit code {code} (10 = drift): nothing continued")
    story.note(exit_code=code, report=report)
    ok = report["verdict"] == "drift" and code == 10

    story.section(5, "Back on fix/payment (`git checkout fix/payment && git stash pop`): resume")
    git(repo, "checkout", "-q", "fix/payment")
    git(repo, "stash", "pop", "-q")
    keeper = Keeper(store)
    resumed, session = keeper.resume(thread, workspace=str(repo))
    data = resumed.to_json()
    story.say(_indent(report_text(resumed, colour=story.colour)))
    if session is not None:
        session.close()
    story.note(report=data)
    ok = ok and data["verdict"] == "ok" and bool(data["in_doubt_operations"])

    story.section(6, "payment.py edited by hand, then checked again")
    payment = repo / "payment.py"
    payment.write_text(payment.read_text() + "\n# tweaked by hand\n")
    code, report = _check(store, thread, repo)
    story.say(_indent(report_text(Report.from_json(report), colour=story.colour)))
    story.note(exit_code=code, report=report)
    ok = ok and report["rerun_verifier"] is True

    story.section(7, "Where it all lives")
    rollouts = sorted(str(p) for p in (store / "sessions").rglob("*.jsonl"))
    story.say("   rollouts (the truth):")
    for path in rollouts:
        story.say(f"     {path}")
    story.say(f"   index (a cache, rebuildable): {store / 'state.db'}")
    story.say(f"   inspect:  sessionkeeper --store {store} list")
    story.say(f"             sessionkeeper --store {store} show {thread}")
    story.note(rollouts=rollouts, index=str(store / "state.db"))
    if as_json:
        sys.stdout.write(orjson.dumps({"ok": ok, "scratch": str(scratch), "store": str(store),
                                       "repo": str(repo), "steps": story.steps},
                                      option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        story.say("\n" + paint("demo complete" if ok else "demo FAILED: a step did not come out "
                               "as expected", "ok" if ok else "blocked", on=story.colour))
    return 0 if ok else 1
