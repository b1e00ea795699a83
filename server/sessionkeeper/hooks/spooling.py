"""A tool call into its session's spool: the files it touches read now, their content kept as raw
blobs, the agent's part redacted, one line appended (`store.spool`). Used by the thin hook
process (`fast`) and, for a session whose journal it has just started, by `respond`.

Invariants: nothing is written when the policy is `off`; the line is appended (and fsynced) only
after every blob it names is durable; a path outside the workspace is never read. Standard
library only, and a few small modules of ours: every tool call of the agent runs this.
"""

from __future__ import annotations

import os
import sys
import time

from .. import jsontext
from ..recovery.queries import CHANGED, HEAD
from ..session.tool_calls import SHELL_TOOLS, inside, named_paths
from ..store import blob_stash, spool
from ..store.home import default_root
from . import capture, tally

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .payload import HookInput

ENV_CATCH_UP = "SESSIONKEEPER_CATCH_UP"
"""Set to 0 to start no background catch-up (the spool is then folded when the journal is read)."""
_MAX_CAPTURED = 5000  # files looked at after one shell call at most (as the start's scan)


def _off(pending: object) -> bool:
    if isinstance(pending, str):
        return pending.strip().lower() == "off"
    code, out = pending.result()  # type: ignore[attr-defined]  # a spawn.Started
    return code == 0 and out.decode("utf-8", "replace").strip().lower() == "off"


def spool_call(hook: HookInput, store: str | None, *, policy: object,
               catch_up: bool = True) -> bool:
    """Look at the call's files and spool it (False: the session has no spool yet, so nothing
    was written); `policy`: the hook policy, or its `git config` started (`_policy`)."""
    workspace = os.path.realpath(hook.cwd) if os.path.isdir(hook.cwd) else None
    shell = hook.tool_name in SHELL_TOOLS and hook.event != "PreToolUse" and workspace is not None
    root = os.path.join(store or default_root(), "journals", hook.agent)
    if shell:
        from .spawn import git

        changing = [git(hook.cwd, *args) for args in CHANGED]  # side by side, with HEAD's
        head_run = git(hook.cwd, *HEAD)
    files: dict[str, object] = {}
    keep: list[tuple[str, bytes]] = []
    named = named_paths(hook.tool_name, hook.tool_input, cwd=hook.cwd,
                        workspace=workspace) if workspace is not None else []
    seen = _look(workspace, named, files, keep) if workspace is not None else []
    line: dict[str, object] = {"v": 1, "at": round(time.time(), 3), "event": hook.event,
                               "call": hook.tool_use_id, "tool": hook.tool_name, "cwd": hook.cwd,
                               "named": seen}
    if shell and workspace is not None:
        parts = [run.result() for run in changing]
        code = next((c for c, _ in parts if c != 0), 0)
        out = b"".join(o for _, o in parts) if code == 0 else b""  # as one ls-files of both
        listed = [p.decode("utf-8") for p in dict.fromkeys(out.split(b"\0")) if p and _utf8(p)]
        known = inside(spool.known_paths(root, hook.session_id), cwd=workspace, workspace=workspace)
        extra = [*listed, *known]
        _look(workspace, [p for p in dict.fromkeys(extra) if p not in files][:_MAX_CAPTURED],
              files, keep, skip=os.path.realpath(store or default_root()))
        head_code, head = head_run.result()
        line["git"] = {"changed": listed if code == 0 else [],
                       "head": head.decode("utf-8", "replace") if head_code == 0 else None}
    line["files"] = files
    if _off(policy):
        return True
    for key, data in keep:
        blob_stash.stash(root, key, data)
    line["payload"] = _redacted({"input": hook.tool_input, "response": hook.tool_response,
                                 "error": hook.error})
    body = jsontext.dumps(line).encode()
    size = spool.append(root, hook.session_id, body)
    if size is None:
        return False
    if seen and workspace is not None:
        spool.add_known(root, hook.session_id, [os.path.join(workspace, p) for p in seen])
    tally.count(store or default_root(), hook.agent, hook.event)
    if catch_up:
        _catch_up(root, hook, store)
    return True


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _look(workspace: str, paths: list[str], files: dict[str, object],
          keep: list[tuple[str, bytes]], *, skip: str | None = None) -> list[str]:
    """Read each path now into `files` (its content into `keep`); the paths read."""
    read = []
    for rel in paths:
        if skip is not None and os.path.realpath(os.path.join(workspace, rel)).startswith(
                skip + os.sep):
            continue  # the store itself, inside the workspace
        found, data = capture.read(workspace, rel)
        if found == capture.ESCAPES:
            continue
        files[rel] = found
        read.append(rel)
        if data is not None and isinstance(found, dict):
            keep.append((str(found["hash"]), data))
    return read


def _redacted(part: dict[str, object]) -> object:
    """The agent's part of the call with its secrets replaced (the same rules as every record)."""
    encoded = jsontext.dumps(part).encode()
    from ..redact import redact_decoded

    return redact_decoded(part, encoded)


def _catch_up(root: str, hook: HookInput, store: str | None) -> None:
    """Start the background fold of this session's spool, unless one is running or it is off."""
    if os.environ.get(ENV_CATCH_UP, "1").strip() == "0":
        return
    from . import catch_up

    if catch_up.running(root, hook.session_id):
        return
    from .spawn import detached

    detached([sys.executable, "-m", "sessionkeeper.hooks.catch_up",
              os.path.abspath(store or default_root()), hook.agent, hook.session_id])
