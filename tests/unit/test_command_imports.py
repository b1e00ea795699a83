"""Each command imports what it needs (issue 13): a listing and a resume check load no
validator, no recorder and no lock, and a listing that reads no agent file loads no translator,
no read values, no hooks, no rewind and no hashing; a clean start validates nothing (fixture:
`repo`, conftest; real processes, real git)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper

SERVER = str(Path(__file__).resolve().parents[2] / "server")
PROBE = """
import io, json, sys
from contextlib import redirect_stdout
from sessionkeeper.cli import main
with redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _loaded(*argv: str, home: Path | None = None) -> tuple[int, set[str]]:
    env = {**os.environ, "PYTHONPATH": SERVER, "GIT_CONFIG_GLOBAL": "/dev/null"}
    if home is not None:  # the agents' default roots under `home`, none named by the environment
        env["HOME"] = str(home)
        for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
            env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, capture_output=True,
                          text=True, check=True)
    out = json.loads(done.stdout.splitlines()[-1])
    return out["code"], set(out["modules"])


@pytest.fixture
def thread(repo: Path, store_dir: Path) -> str:
    """A closed thread in `repo` with one message (written in this process)."""
    from sessionkeeper.api import Keeper

    session = Keeper(store_dir).start(repo)
    session.record({"type": "message", "role": "user", "text": "hello"})
    session.close()
    return session.thread_id


HEAVY = {"pydantic", "filelock", "sessionkeeper.session.validate", "sessionkeeper.session.live",
         "sessionkeeper.store.recorder", "sessionkeeper.render", "sessionkeeper.store.fsck",
         "sessionkeeper.schema", "git", "pygls", "lsprotocol", "sessionkeeper.lsp", "watchfiles",
         "shutil", "bz2", "lzma", "psycopg",
         "sessionkeeper.store.remote.shared"}
"""Not for a listing nor a check: validation, writing, locks, the record schema, GitPython, the
LSP stack, the Keeper's writes and what content actions load when called, and the shutil
argparse imports to measure the terminal (`cli.common.Parser` measures it), and psycopg with the
shared index (loaded only with --index / $SESSIONKEEPER_INDEX)."""


def test_list_json_loads_no_validator_recorder_lock_nor_renderer(
        repo: Path, store_dir: Path, thread: str) -> None:
    """Fixture: `thread`; `sessionkeeper list --json --workspace`."""
    code, modules = _loaded("list", "--json", "--workspace", str(repo), "--store", str(store_dir))
    assert code == 0
    assert modules & (HEAVY | {"sessionkeeper.recovery.state"}) == set()


ONLY_WHEN_READ = [
    "sessionkeeper.agents.codex_translator",  # an agent's translator: only when a file is parsed
    "sessionkeeper.agents.claude_translator",
    "sessionkeeper.agents.translate",
    "sessionkeeper.agents.reading",
    "sessionkeeper.agents.reads",  # the values of a read (Checkpoint, Read, ...)
    "sessionkeeper.agents.lines",
    "sessionkeeper.redact",  # what an import redacts before it reaches the index
    "sessionkeeper.redact_shapes",
    "logging",  # an import that fails logs it
    "hashlib",  # hashing files (a dirty fingerprint, an agent file's anchors)
    "sessionkeeper.recovery.lifecycle",  # the hooks a session runs
    "sessionkeeper.keeper.rewinding",  # content actions
    "sessionkeeper.store.log",  # a thread's records read back by seq (a replay's, a session's)
    "sessionkeeper.store.codec",
    "sessionkeeper.recovery.verdicts",  # the decisions a resume takes
    "sessionkeeper.cli.content",  # the content commands and options (start, record, rewind)
]


@pytest.fixture
def listed_modules(repo: Path, store_dir: Path, thread: str, tmp_path: Path) -> set[str]:
    """The modules a fresh `sessionkeeper list --json --workspace` of `thread` loaded, with
    empty agent roots (an empty HOME)."""
    home = tmp_path / "home"
    home.mkdir()
    code, modules = _loaded("list", "--json", "--workspace", str(repo), "--store", str(store_dir),
                            home=home)
    assert code == 0
    assert "sessionkeeper.agents.importer" in modules  # the agents' roots were looked at
    return modules


@pytest.mark.parametrize("module", ONLY_WHEN_READ)
def test_a_listing_that_reads_no_agent_file_does_not_import(listed_modules: set[str],
                                                            module: str) -> None:
    """Fixture: `listed_modules`; each module is loaded where first needed, not by a listing."""
    assert module not in listed_modules


def test_check_resume_json_loads_no_validator_recorder_nor_lock(
        repo: Path, store_dir: Path, thread: str) -> None:
    """Fixture: `thread`; `sessionkeeper --check-resume THREAD --json`."""
    code, modules = _loaded("--check-resume", thread, "--workspace", str(repo), "--store",
                            str(store_dir), "--json")
    assert code == 0
    assert modules & HEAVY == set()
    assert "sessionkeeper.recovery.summary" not in modules  # a listing's values: no check's


def test_a_clean_start_validates_nothing(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`, clean; `sessionkeeper start` records meta and lifecycle only."""
    code, modules = _loaded("start", "--workspace", str(repo), "--store", str(store_dir))
    assert code == 0
    assert "pydantic" not in modules and "sessionkeeper.session.validate" not in modules


def test_a_clean_start_builds_only_meta_and_lifecycle_records(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`, clean; `sessionkeeper start` imports the schema's envelope, meta and
    lifecycle (`schema.thread`, `schema.values`), not the other record families, nor the
    listing's summaries (a session sums its state up with `recovery.status`)."""
    code, modules = _loaded("start", "--workspace", str(repo), "--store", str(store_dir))
    assert code == 0
    assert {"sessionkeeper.schema.thread", "sessionkeeper.schema.values"} <= modules
    assert modules & {"sessionkeeper.schema.course", "sessionkeeper.schema.work",
                      "sessionkeeper.schema.frameworks", "sessionkeeper.recovery.summary"} == set()


HOOK_PROBE = """
import io, json, sys
from contextlib import redirect_stdout
from sessionkeeper.cli import main
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv.pop().encode()))
with redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_the_start_hook_of_a_new_session_validates_nothing_with_pydantic(
        repo: Path, store_dir: Path, agent: str) -> None:
    """Fixture: `repo` with a changed file; a new session's SessionStart (startup) as a fresh
    process: its journal starts with the default permissions and the files seen, no pydantic."""
    from tests.unit._hooks import SID, payload, records

    (repo / "payment.py").write_text("changed\n")
    env = {**os.environ, "PYTHONPATH": SERVER, "GIT_CONFIG_GLOBAL": "/dev/null"}
    stdin = json.dumps(payload(agent, "SessionStart", repo, source="startup"))
    done = subprocess.run([sys.executable, "-c", HOOK_PROBE, "hook", "--store", str(store_dir),
                           agent, "SessionStart", stdin], env=env, capture_output=True,
                          text=True, check=True)
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["code"] == 0
    assert {"pydantic", "sessionkeeper.session.validate"} & set(out["modules"]) == set()
    written = records(store_dir, agent, SID)
    assert [r["path"] for r in written if r.get("change") == "seen"] == ["payment.py"]
    meta = Keeper(store_dir, read_only=True).journal_rollouts(agent, SID)[0].meta
    assert meta is not None and meta["client"]["name"] == "sessionkeeper-hook"


@pytest.mark.parametrize("tool", ["Write", "Bash", "TodoWrite"])
def test_a_tool_hook_validates_nothing_with_pydantic(repo: Path, store_dir: Path,
                                                     tool: str) -> None:
    """Fixture: `repo`, a Claude Code session started by its hook; then a Pre- and PostToolUse
    of each kind of tool, each a fresh process (what the agent waits for on every call)."""
    from tests.unit._hooks import SID, call, payload, records

    call("claude", "SessionStart", repo, store_dir, source="startup")
    tool_input = {"Write": {"file_path": str(repo / "n.md"), "content": "x"},
                  "Bash": {"command": "true"},
                  "TodoWrite": {"todos": [{"content": "a", "status": "completed"}]}}[tool]
    env = {**os.environ, "PYTHONPATH": SERVER, "GIT_CONFIG_GLOBAL": "/dev/null"}
    for event in ("PreToolUse", "PostToolUse"):
        if event == "PostToolUse" and tool == "Write":
            (repo / "n.md").write_text("x")
        stdin = json.dumps(payload("claude", event, repo, tool_name=tool, tool_input=tool_input,
                                   tool_use_id="toolu_1", tool_response={}))
        done = subprocess.run([sys.executable, "-c", HOOK_PROBE, "hook", "--store",
                               str(store_dir), "claude", event, stdin], env=env,
                              capture_output=True, text=True, check=True)
        out = json.loads(done.stdout.splitlines()[-1])
        assert out["code"] == 0
        assert {"pydantic", "sessionkeeper.session.validate"} & set(out["modules"]) == set()
        # nor a record class of the schema: it records dicts into a journal that exists
        assert [m for m in out["modules"] if m.startswith("sessionkeeper.schema.")] == []
    kinds = [r["type"] for r in records(store_dir, "claude", SID)]
    assert kinds.count("operation") == 2


THIN_HOOK = {"sessionkeeper", "sessionkeeper.cli", "sessionkeeper.errors", "sessionkeeper.hooks",
             "sessionkeeper.hooks.fast", "sessionkeeper.hooks.spooling", "sessionkeeper.hooks.capture",
             "sessionkeeper.hooks.catch_up", "sessionkeeper.hooks.limits",
             "sessionkeeper.hooks.payload", "sessionkeeper.hooks.policy_cache", "sessionkeeper.hooks.spawn",
             "sessionkeeper.hooks.tally",
             "sessionkeeper.recovery",
             "sessionkeeper.recovery.content_rules", "sessionkeeper.recovery.git_env",
             "sessionkeeper.recovery.queries", "sessionkeeper.redact", "sessionkeeper.redact_shapes",
             "sessionkeeper.store",
             "sessionkeeper.store.blob_stash", "sessionkeeper.store.home", "sessionkeeper.store.spool",
             "sessionkeeper.session", "sessionkeeper.session.tool_calls", "sessionkeeper.jsontext"}
"""Every module of ours a tool hook may load (issue 26: the thin hook)."""
NOT_IN_A_TOOL_HOOK = {"dataclasses", "typing", "subprocess", "pathlib", "orjson", "pydantic",
                      "platformdirs", "zstandard", "filelock", "sqlite3", "hashlib", "inspect",
                      "threading", "ahocorasick_rs", "tempfile", "uuid", "datetime", "json", "re",
                      "enum", "signal", "contextlib", "functools", "collections", "fnmatch"}
"""What a tool hook never loads: each costs it milliseconds of CPU (json with re ~7, typing ~2,
subprocess ~4, dataclasses with inspect ~5, hashlib's OpenSSL ~2, orjson with what it loads ~10,
zstandard with platform ~6, signal's enums ~2)."""
THIN_PROBE = """
import io, sys
from sessionkeeper.cli import main
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv.pop().encode()))
code = main(sys.argv[1:])
sys.stdout.write(repr({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""
"""HOOK_PROBE without json and contextlib (the probe's own imports would hide the hook's)."""


@pytest.mark.parametrize("tool", ["Edit", "Bash"])
def test_a_tool_hook_loads_a_handful_of_modules_and_spools_the_call(repo: Path, store_dir: Path,
                                                                    tool: str) -> None:
    """Fixture: `repo`, a Claude Code session started by its hook; the Pre- and PostToolUse of an
    Edit (its file rewritten between them) or of a Bash call, each a fresh process started as the
    installed hooks start (`python -S`)."""
    from sessionkeeper.store import spool
    from tests.unit._hooks import SID, call, payload

    call("claude", "SessionStart", repo, store_dir, source="startup")
    tool_input = ({"file_path": str(repo / "payment.py")} if tool == "Edit"
                  else {"command": "touch made.txt"})
    env = {**os.environ, "PYTHONPATH": SERVER, "GIT_CONFIG_GLOBAL": "/dev/null"}
    for event in ("PreToolUse", "PostToolUse"):
        if event == "PostToolUse":
            (repo / ("payment.py" if tool == "Edit" else "made.txt")).write_text("new\n")
        stdin = json.dumps(payload("claude", event, repo, tool_name=tool, tool_input=tool_input,
                                   tool_use_id="toolu_1", tool_response={"ok": True}))
        done = subprocess.run([sys.executable, "-S", "-c", THIN_PROBE, "hook", "--store",
                               str(store_dir), "claude", event, stdin], env=env,
                              capture_output=True, text=True, check=True)
        out = ast.literal_eval(done.stdout.splitlines()[-1])
        assert out["code"] == 0 and done.stderr == ""
        ours = {m for m in out["modules"] if m.startswith("sessionkeeper")}
        assert ours <= THIN_HOOK, sorted(ours - THIN_HOOK)
        assert NOT_IN_A_TOOL_HOOK & set(out["modules"]) == set()
        assert "site" not in out["modules"]  # started as installed (-S), it never needed site
    calls = spool.read(spool.spool_path(str(store_dir / "journals" / "claude"), SID)).calls
    assert [(c["event"], c["call"]) for _end, c in calls] == [("PreToolUse", "toolu_1"),
                                                             ("PostToolUse", "toolu_1")]
    changed = "payment.py" if tool == "Edit" else "made.txt"
    assert changed in calls[1][1]["files"]  # type: ignore[operator]  # read at the call


def test_only_the_mcp_command_imports_the_mcp_sdk(repo: Path, store_dir: Path, thread: str,
                                                  tmp_path: Path) -> None:
    """Fixture: `thread`; a listing, a hooks status and the full parser's help load no module of
    the MCP SDK nor our server on it (`sessionkeeper mcp` imports them when it runs)."""
    home = tmp_path / "home"
    home.mkdir()
    for argv in (["list", "--json", "--workspace", str(repo), "--store", str(store_dir)],
                 ["hooks", "status", "--json", "--store", str(store_dir)],
                 ["mcp", "--help"]):
        modules = _help_modules(argv, home) if argv[-1] == "--help" else _loaded(*argv, home=home)[1]
        assert {m for m in modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))} == set()
        assert "sessionkeeper.mcp.server" not in modules and "sessionkeeper.mcp.tools" not in modules


def _help_modules(argv: list[str], home: Path) -> set[str]:
    """The modules loaded by a command line that ends in --help (argparse exits)."""
    probe = PROBE.replace("    code = main(sys.argv[1:])", """    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code""")
    env = {**os.environ, "PYTHONPATH": SERVER, "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", probe, *argv], env=env, capture_output=True,
                          text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1])["modules"])


THIN_RESUME = THIN_HOOK | {"sessionkeeper.hooks.proven", "sessionkeeper.hooks.digest",
                           "sessionkeeper.hooks.answers", "sessionkeeper.hooks.state",
                           "sessionkeeper.hooks.telling", "sessionkeeper.hooks.policy",
                           "sessionkeeper.store.private", "sessionkeeper.clock"}
"""Every module of ours a resume its digest proves ok may load (issue 26: the resume digest)."""


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_resume_its_digest_proves_ok_is_answered_by_the_thin_process_as_the_full_way_answers(
        repo: Path, store_dir: Path, agent: str) -> None:
    """Fixture: `repo`, a session started by its hook (which leaves the digest); its resume,
    answered by `sessionkeeper hook` (the thin process), then by the full way (`entry`) in a
    process of its own: the same stdout, and the same records left for the journal."""
    from sessionkeeper.hooks import state
    from tests.unit._hooks import SID, call, payload

    call(agent, "SessionStart", repo, store_dir, source="startup")
    stdin = json.dumps(payload(agent, "SessionStart", repo, source="resume"))
    env = {**os.environ, "PYTHONPATH": SERVER, "GIT_CONFIG_GLOBAL": "/dev/null"}
    thin = subprocess.run([sys.executable, "-c", THIN_PROBE, "hook", "--store", str(store_dir),
                           agent, "SessionStart", stdin], env=env, capture_output=True,
                          text=True, check=True)
    *answer, probe = thin.stdout.splitlines()
    out = ast.literal_eval(probe)
    assert out["code"] == 0 and thin.stderr == ""
    ours = {m for m in out["modules"] if m.startswith("sessionkeeper")}
    assert ours <= THIN_RESUME, sorted(ours - THIN_RESUME)
    assert NOT_IN_A_TOOL_HOOK & set(out["modules"]) == set()
    told = json.loads("\n".join(answer))["hookSpecificOutput"]["additionalContext"]
    assert told.startswith(f"Session Keeper verified this resumed session against {repo}")
    full = subprocess.run([sys.executable, "-c", "import sys; from sessionkeeper.hooks.entry "
                           "import main; sys.exit(main(sys.argv[1:]))", "--store", str(store_dir),
                           agent, "SessionStart"], input=stdin, env=env, capture_output=True,
                          text=True, check=True)
    assert full.stdout == "\n".join(answer) + "\n" and full.stderr == ""
    deferred = state.take_deferred(store_dir, agent, SID)
    assert [(r["source"], r["reason"]) for r in deferred] == [("resume", "verified: ok")] * 2
    assert state.runs_of(store_dir, agent)["last"]["outcome"] == "ok"
