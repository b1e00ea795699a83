"""What a started server loads (issue 13): the protocol's results name the recovery types for the
type checker only, so answering `initialize` loads no report, finding, summary, index row, plan,
git operation or worktree state; each arrives with the first request that needs it (fixtures:
a fresh interpreter per probe, doing what `sessionkeeper serve` does before it reads stdin)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SERVER = str(Path(__file__).resolve().parents[2] / "server")
PROBE = """
import json, sys
import sessionkeeper.cli, sessionkeeper.lsp.app as app
app.create_server()
print(json.dumps(sorted(sys.modules)))
"""

LOADED_ON_FIRST_NEED = [
    "sessionkeeper.recovery.report",  # a check's or resume's report
    "sessionkeeper.recovery.findings",  # its differences and invalidations
    "sessionkeeper.recovery.plan",  # what a resume does with a decision
    "sessionkeeper.recovery.summary",  # a listing's thread summaries
    "sessionkeeper.store.index",  # the index rows they are made of
    "sessionkeeper.lsp.gitops",  # git, once a session is current or a switch back is asked
    "sessionkeeper.lsp.checkout",  # a move of HEAD in a watched batch
    "sessionkeeper.recovery.advice",  # how to switch back
    "sessionkeeper.recovery.subsystems",  # the worktree state of a switch back or live check
    "sessionkeeper.recovery.lifecycle",  # the hooks, made with the Keeper from the options' specs
    "sessionkeeper.recovery.baseline",  # hashing a watched batch's files, capturing a baseline
]


@pytest.fixture(scope="module")
def started_modules(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The modules of a fresh interpreter after `create_server()` (an empty store)."""
    store = tmp_path_factory.mktemp("store")
    env = {**os.environ, "PYTHONPATH": SERVER, "SESSIONKEEPER_HOME": str(store)}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_the_probe_started_the_server_with_its_protocol(started_modules: set[str]) -> None:
    """Fixture: `started_modules` (the probe did load the handlers and their protocol)."""
    assert {"sessionkeeper.lsp.server", "sessionkeeper.lsp.protocol",
            "sessionkeeper.lsp.features.sessions"} <= started_modules


@pytest.mark.parametrize("module", LOADED_ON_FIRST_NEED)
def test_a_started_server_does_not_import(started_modules: set[str], module: str) -> None:
    """Fixture: `started_modules`; each module is imported by the first request needing it."""
    assert module not in started_modules


def test_the_results_hints_resolve_once_their_names_are_bound() -> None:
    """No fixture: the schema generator's step, in a fresh interpreter (no other test's imports)."""
    code = ("import dataclasses, typing\n"
            "from sessionkeeper.lsp import protocol\n"
            "protocol.bind_result_names()\n"
            "kinds = [v for v in vars(protocol).values() if dataclasses.is_dataclass(v)]\n"
            "hints = {k.__name__: typing.get_type_hints(k) for k in kinds}\n"
            "print(hints['ListResult']['threads'], hints['ResumeResult']['report'].__name__)\n")
    env = {**os.environ, "PYTHONPATH": SERVER}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["list[sessionkeeper.recovery.summary.ThreadSummary]", "Report"]
