"""The real Hermes Agent writes sessions; `sessionkeeper` lists, checks and resumes them (never skipped).

Hermes is installed from PyPI at its pinned version into its own virtualenv (install.sh hermes),
runs offline against our fake Anthropic server on 127.0.0.1 with a throwaway HOME and
HERMES_HOME: a terminal session (`hermes chat -q`, one shell call), and a Telegram DM chat turn
through Hermes's own gateway session code taken "yesterday" (faketime), so its reset policy
(`both`: daily at 04:00 or 60 min idle) has come due since. Every read command leaves the Hermes
home digest-identical.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from sessionkeeper import agents
from sessionkeeper.agents.hermes import thread_of
from tests.e2e.agents.conftest import exe_of
from tests.e2e.agents.fake_models import FakeModel
from tests.e2e.agents.hermes_drive import HermesDriver
from tests.unit._agents import tree_digest

pytestmark = pytest.mark.timeout(1200)


def version_of(exe: Path) -> str:
    """What `hermes --version` prints, run with a scratch home (it writes logs into its home)."""
    scratch = Path(tempfile.mkdtemp(prefix="hermes-version-"))
    try:
        return subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=120,
                              check=True, env={**os.environ, "HOME": str(scratch),
                                               "HERMES_HOME": str(scratch / ".hermes")}).stdout.strip()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
PINNED = "0.19.0"


@pytest.fixture(scope="module")
def hermes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HermesDriver, dict[str, str]]]:
    """A Hermes home with a terminal session (a shell call) and a chat turn of yesterday."""
    exe = exe_of("hermes")
    wanted = os.environ.get("SK_HERMES_VERSION") or PINNED
    with FakeModel("anthropic") as fake:
        driver = HermesDriver(exe, tmp_path_factory.mktemp("real-hermes"), fake,
                              version=wanted if wanted != "latest" else
                              re.findall(r"v(\d+\.\d+\.\d+)", version_of(exe))[0])
        cli = driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
        chat = driver.chat("hello from telegram", shift="-1d")
        yield driver, {"cli": cli, "chat": chat["session_id"]}


def sk(driver: HermesDriver, *args: str, data_home: Path, codes: tuple[int, ...] = (0, 10, 11)) -> Any:
    """`sessionkeeper ... --json` reading only this Hermes home; asserts the home is unchanged."""
    before = tree_digest(driver.root)
    env = {k: v for k, v in os.environ.items() if k != "SESSIONKEEPER_HOME"}
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", *args, "--json", "--hermes-home",
                           str(driver.root), "--agents", "hermes"], capture_output=True, text=True,
                          timeout=120, env={**env, "XDG_DATA_HOME": str(data_home), "NO_COLOR": "1"})
    assert tree_digest(driver.root) == before, f"{args} changed the Hermes home"
    assert done.returncode in codes, done.stderr
    return orjson.loads(done.stdout)


def test_the_pinned_hermes_is_what_runs(hermes: tuple[HermesDriver, dict[str, str]]) -> None:
    """`hermes`: `hermes --version` names the pinned release (or $SK_HERMES_VERSION)."""
    driver, _ = hermes
    wanted = os.environ.get("SK_HERMES_VERSION") or PINNED
    assert wanted == "latest" or wanted in version_of(driver.exe)


def test_a_real_terminal_session_is_listed_and_checks_ok_in_place(
        hermes: tuple[HermesDriver, dict[str, str]], tmp_path: Path) -> None:
    """`hermes`: the terminal session, with its shell call, in its repository; blocked elsewhere."""
    driver, ids = hermes
    data = tmp_path / "xdg"
    rows = {r["thread_id"]: r for r in sk(driver, "list", data_home=data)}
    row = rows[thread_of(ids["cli"])]
    assert (row["agent"], row["title"]) == ("hermes", "Create a file please.")
    assert row["cwd"] == os.path.realpath(driver.repo)
    ok = sk(driver, "--check-resume", ids["cli"], "--workspace", str(driver.repo), data_home=data)
    assert (ok["verdict"], ok["agent"], ok["differences"]) == ("ok", "hermes", [])
    assert ok["thread_id"] == thread_of(ids["cli"])
    assert ok["subsystems"]["operations"]["summary"]["committed"] == 1
    [call] = driver.fake.calls
    [file] = [f for f in agents.get("hermes").discover([driver.root]) if f.path.name.endswith(ids["cli"])]
    assert [r["operation_id"] for r in agents.get("hermes").read(file).records
            if r["type"] == "operation"] == [call, call]
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True, timeout=30)
    away = sk(driver, "--check-resume", ids["cli"], "--workspace", str(other), data_home=data)
    assert away["verdict"] == "blocked"
    assert [d["kind"] for d in away["differences"]] == ["other_repository"]


def test_a_chat_past_its_reset_boundary_checks_ok_with_the_reset_as_a_lifecycle_fact(
        hermes: tuple[HermesDriver, dict[str, str]], tmp_path: Path) -> None:
    """`hermes`: yesterday's Telegram DM; then a turn now, which Hermes itself resets (idle)."""
    driver, ids = hermes
    data = tmp_path / "xdg"
    due = sk(driver, "--check-resume", ids["chat"], "--workspace", str(driver.repo), data_home=data)
    assert (due["verdict"], due["differences"]) == ("ok", [])
    notes = "\n".join(due["notes"])
    assert "Hermes reset policy for telegram/dm chats: both" in notes
    assert "an idle reset of this chat came due" in notes and "not drift" in notes
    now = driver.chat("hello again")
    assert now["was_auto_reset"] and now["reset_reason"] == "idle"
    assert now["session_id"] != ids["chat"]
    after = sk(driver, "--check-resume", ids["chat"], "--workspace", str(driver.repo), data_home=data)
    assert after["verdict"] == "ok"
    assert any("Hermes reset this chat's session (idle)" in n for n in after["notes"])
    log = agents.get("hermes").load(next(f for f in agents.get("hermes").discover([driver.root])
                                         if f.path.name.endswith(ids["chat"])))
    resets = [r for r in log.records if r["type"] == "lifecycle"]
    assert [r["source"] for r in resets] == ["idle_reset"]
    assert now["session_id"] in resets[0]["reason"]
    assert log.meta is not None
    context = log.meta["data"]["agent"]["source_context"]
    assert (context["platform"], context["chat_type"], context["chat_id"]) == ("telegram", "dm", "4242")
    assert context["user"].startswith("user_") and "'777'" not in repr(log.meta)  # the raw id
    # as a value of its own (a random UUID in the meta may hold the digits 777)
    assert all("4242" not in str(r.get("text", "")) for r in log.records if r["type"] == "message")


def test_a_real_session_resumes_through_hermes_and_is_read_on_incrementally(
        hermes: tuple[HermesDriver, dict[str, str]], tmp_path: Path) -> None:
    """`hermes`: `sessionkeeper resume` gives `hermes --resume <id>`; Hermes continues that session."""
    driver, ids = hermes
    data = tmp_path / "xdg"
    resumed = sk(driver, "resume", ids["cli"], "--workspace", str(driver.repo), data_home=data)
    assert resumed["command"]["argv"] == ["env", f"HERMES_HOME={driver.root}", "hermes", "--resume",
                                          ids["cli"]]
    assert resumed["command"]["cwd"] == os.path.realpath(driver.repo)
    reader = agents.get("hermes")
    [file] = [f for f in reader.discover([driver.root]) if f.path.name.endswith(ids["cli"])]
    first = reader.read(file)
    again = driver.run("One more thing.\nRUN: echo again", resume=ids["cli"])
    assert again == ids["cli"]
    [file] = [f for f in reader.discover([driver.root]) if f.path.name.endswith(ids["cli"])]
    more = reader.read(file, first.checkpoint)
    assert more.mode == "appended" and more.lines_parsed >= 2
    assert [r["seq"] for r in more.records][0] == first.summary.records + 1
    assert more.summary.messages > first.summary.messages
    assert more.summary.operations == first.summary.operations + 1


def test_hermes_runs_our_hook_in_its_resume_drift_reaches_the_model_and_another_repo_is_stopped(
        tmp_path: Path) -> None:
    """No shared fixture: a Hermes home whose config.yaml runs `sessionkeeper hook hermes` on
    pre_llm_call / pre_tool_call; a session started, resumed in place, then — its repository
    moved away — resumed from another repository."""
    exe = exe_of("hermes")
    store = tmp_path / "store"
    with FakeModel("anthropic") as fake:
        driver = HermesDriver(exe, tmp_path / "h", fake, version=PINNED, hooks_store=store)
        first = driver.run("Start.\nRUN: echo one > one.txt && echo wrote-one")
        assert (driver.repo / "one.txt").exists()
        assert not any("Session Keeper" in str(r["body"]) for r in fake.requests)  # fresh: silent
        driver.run("Go on.\nRUN: echo two > two.txt && echo wrote-two", resume=first)
        assert (driver.repo / "two.txt").exists()
        assert any("checked ok" in str(r["body"]) for r in fake.requests)
        # the repository moved away; Hermes finds the recorded dir gone and resumes where it is run
        moved = driver.repo.rename(driver.repo.with_name("repo-moved"))
        other = tmp_path / "other"
        subprocess.run(["git", "init", "-q", str(other)], check=True, timeout=30)
        seen = len(fake.requests)
        driver.run("And here.\nRUN: echo three > three.txt && echo wrote-three", resume=first,
                   cwd=other)
        told = [str(r["body"]) for r in fake.requests[seen:]]
        assert any("Session Keeper stopped this resume" in body for body in told)
        assert not (other / "three.txt").exists() and not (moved / "three.txt").exists()
