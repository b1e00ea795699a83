"""The README's first command, run for real: every step of the demo's story comes out as told."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson


def test_demo_tells_the_whole_story(tmp_path):
    """Fixture: a scratch directory under tmp_path; the demo runs as `python -m sessionkeeper`."""
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "demo", "--json",
                           "--dir", str(tmp_path / "demo")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    out = orjson.loads(done.stdout)
    steps = {s["step"]: s for s in out["steps"]}
    assert out["ok"] is True
    assert steps[2]["tests"] == [7, 9]
    assert steps[3]["killed_exit"] == -9
    drift = steps[4]["report"]
    assert steps[4]["exit_code"] == 10 and drift["verdict"] == "drift"
    assert [d["kind"] for d in drift["differences"]] == ["branch", "head", "file_changed",
                                                          "file_changed"]
    ok = steps[5]["report"]
    assert ok["verdict"] == "ok" and ok["continued"] is True
    todos, tests = ok["subsystems"]["todos"]["summary"], ok["subsystems"]["verifier"]["summary"]
    assert (todos["done"], todos["total"]) == (1, 3)
    assert (tests["tests"]["passed"], tests["tests"]["total"]) == (7, 9)
    assert ok["rerun_verifier"] is False
    state = {name: sub["summary"] for name, sub in ok["subsystems"].items()}
    assert state["cost"]["total"]["usd"] == 0.045
    assert state["permissions"]["approval_mode"] == "on-request"
    assert state["model"]["effective"] == "gpt-5"
    assert state["attribution"]["agent"] == ["payment.py", "test_payment.py"]
    assert [o["operation_id"] for o in ok["in_doubt_operations"]] == ["op-deploy-staging"]
    stale = steps[6]["report"]
    assert stale["rerun_verifier"] is True
    assert [(d["kind"], d["recorded"]["path"]) for d in stale["differences"]] == [
        ("file_changed", "payment.py")]
    assert len(steps[7]["rollouts"]) == 2
    store = tmp_path / "demo" / "store"
    assert not any(b"ghp_" in p.read_bytes() for p in store.rglob("*") if p.is_file())
