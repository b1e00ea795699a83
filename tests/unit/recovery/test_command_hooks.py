"""Command hooks: configured as data, run as real subprocesses, isolated when they fail."""

from __future__ import annotations

import sys

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.lsp.options import parse_options
from sessionkeeper.recovery.command_hooks import HookSpec, command_hook, registry_from
from tests.seed import crash, record_seed


def test_a_command_hook_reads_the_context_and_adds_what_it_prints(tmp_path):
    """Fixture: a Python one-liner as the hook command."""
    hook = command_hook(HookSpec(name="echo-thread", sources=["resume"], command=[
        sys.executable, "-c", "import json,sys; print('thread', json.load(sys.stdin)['thread_id'])"]))
    run = registry_from([]).run("resume", {})  # an empty registry runs nothing
    assert run.results == []
    assert hook.fn({"thread_id": "t-1", "workspace": str(tmp_path)}) == "thread t-1"


@pytest.mark.parametrize("spec,field", [({"command": ["true"]}, "name"),
                                        ({"name": "x", "command": "rm -rf /"}, "command"),
                                        ({"name": "x", "command": ["true"], "sources": ["boot"]},
                                         "sources"),
                                        ({"name": "x", "command": ["true"], "timeout_s": "soon"},
                                         "timeout_s")])
def test_a_bad_hook_spec_is_dropped_with_the_field_named_and_the_rest_applies(spec, field):
    """Fixture: one bad spec beside a good one in initializationOptions."""
    good = {"name": "good", "command": ["true"], "sources": ["resume"]}
    options, problems = parse_options({"hooks": [spec, good], "watch": False})
    assert [h.name for h in options.hooks] == ["good"] and options.watch is False
    assert len(problems) == 1 and problems[0].startswith("hooks[0]: ") and field in problems[0]


def test_resume_runs_command_hooks_in_order_and_isolates_a_failing_one(store_dir, repo):
    """Fixture: a crashed seed session; hooks: one exits 3, one prints the workspace's notes."""
    (repo / "NOTES.md").write_text("remember the staging deploy")
    hooks = registry_from([
        HookSpec(name="notes", sources=["resume"], order=2, command=["cat", "NOTES.md"]),
        HookSpec(name="broken", sources=["resume"], order=1,
                 command=[sys.executable, "-c", "import sys; sys.exit(3)"]),
        HookSpec(name="slow", sources=["resume"], order=3, timeout_s=0.3,
                 command=[sys.executable, "-c", "import time; time.sleep(5)"]),
    ])
    keeper = Keeper(store_dir)
    session = record_seed(keeper, repo)
    crash(session)
    report, resumed = Keeper(store_dir, hooks=hooks).resume(session.thread_id, workspace=str(repo))
    assert report.verdict == "ok" and report.continued
    assert [f["hook"] for f in report.hook_failures] == ["broken", "slow"]
    assert "exit 3" in report.hook_failures[0]["error"]
    assert report.hook_context == ["remember the staging deploy"]
    resumed.close()
