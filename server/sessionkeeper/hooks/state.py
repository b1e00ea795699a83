"""The hooks' own small files in the store (`<store>/hooks/`): gates and when each agent's hooks ran.

    hooks/gates/<agent>-<session id>.json   a resume Claude could not be stopped at: the reason,
                                            until a prompt acknowledges it or the gate is lifted
    hooks/runs/<agent>.json                 the last hook call of the agent, and the last failure
    hooks/runs/<agent>.tool-calls           the thin tool hooks' calls, one byte each (`tally`)
    hooks/turns/<agent>-<session id>.json   when the session's latest prompt was submitted (the
                                            start of its current turn, for `drift_since`)

Invariants: every file is written whole (a temp file, then a rename) with mode 0600 in 0700
directories, so a reader sees the old or the new content, never a mix; a damaged or unreadable
file reads as absent (a gate that cannot be read never blocks — hooks fail open); nothing here
is ever written outside the store.
"""

from __future__ import annotations

import os
from _thread import get_ident

from .. import jsontext
from ..clock import utc_now_iso
from ..errors import SessionKeeperError
from ..store.private import ensure_private_dir
from . import tally

TYPE_CHECKING = False  # standard library only: a resume its digest proves ok runs in a thin process
if TYPE_CHECKING:
    from typing import Any

    Root = str | os.PathLike[str]


class Gate:
    """A resume the agent could not be stopped at: prompts are blocked until it is acknowledged."""

    __slots__ = ("agent", "session_id", "verdict", "reason", "cwd", "created")

    def __init__(self, *, agent: str, session_id: str, verdict: str, reason: str, cwd: str,
                 created: str | None = None) -> None:
        """`verdict`: blocked, or drift under block-on-drift; `reason`: what the block says (one
        paragraph: what differs and what to do); `created`: now when not given."""
        self.agent = agent
        self.session_id = session_id
        self.verdict = verdict
        self.reason = reason
        self.cwd = cwd
        self.created = created if created is not None else utc_now_iso()

    def as_dict(self) -> dict[str, str]:
        """The gate as its file holds it."""
        return {name: getattr(self, name) for name in self.__slots__}


def hooks_dir(store_root: Root) -> str:
    """The hooks' directory inside a store."""
    return os.path.join(os.fspath(store_root), "hooks")


def write_json(store_root: Root, path: Root, data: dict[str, Any]) -> None:
    """Write a small JSON file of the hooks whole (a temp file, then a rename), 0600 in 0700."""
    path = os.fspath(path)
    ensure_private_dir(store_root)
    ensure_private_dir(os.path.dirname(path), within=store_root)
    tmp = os.path.join(os.path.dirname(path),
                       f".{os.path.basename(path)}.{os.getpid()}.{get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            os.write(fd, jsontext.dumps(data).encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: str) -> bool:
    """Remove a file; False when there was none."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            data = jsontext.loads(handle.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _gate_path(store_root: Root, agent: str, session_id: str) -> str:
    return os.path.join(hooks_dir(store_root), "gates", f"{agent}-{session_id}.json")


def set_gate(store_root: Root, gate: Gate) -> None:
    """Close the gate of one agent session (replacing an earlier one)."""
    write_json(store_root, _gate_path(store_root, gate.agent, gate.session_id), gate.as_dict())


def gate_of(store_root: Root, agent: str, session_id: str) -> Gate | None:
    """The closed gate of an agent session, or None (also when its file cannot be read)."""
    data = _read(_gate_path(store_root, agent, session_id))
    if data is None:
        return None
    try:
        return Gate(**data)
    except TypeError:
        return None


def lift_gate(store_root: Root, agent: str, session_id: str) -> bool:
    """Open the gate of an agent session; True when one was closed."""
    return _unlink(_gate_path(store_root, agent, session_id))


def note_run(store_root: Root, agent: str, *, event: str, outcome: str, session_id: str | None,
             note: str | None = None) -> None:
    """Remember the agent's latest hook call (and, if it failed, the latest failure)."""
    path = os.path.join(hooks_dir(store_root), "runs", f"{agent}.json")
    run = {"at": utc_now_iso(), "event": event, "outcome": outcome, "session_id": session_id,
           "note": note}
    earlier = _read(path) or {}
    calls = earlier.get("calls")
    data = {"last": run, "last_failure": run if outcome == "failed" else earlier.get("last_failure"),
            "calls": (calls if isinstance(calls, int) else 0) + 1}
    try:
        write_json(store_root, path, data)
    except (OSError, SessionKeeperError):  # bookkeeping never fails a hook
        return


def runs_of(store_root: Root, agent: str) -> dict[str, Any]:
    """What `note_run` kept for an agent, with the thin tool hooks' calls counted in: {"last",
    "last_failure", "calls"} (empty if none)."""
    runs = _read(os.path.join(hooks_dir(store_root), "runs", f"{agent}.json")) or {}
    counted, event, at = tally.read(str(store_root), agent)
    if not counted or at is None:
        return runs
    calls = runs.get("calls")
    runs = {**runs, "calls": (calls if isinstance(calls, int) else 0) + counted}
    from datetime import datetime, timezone

    stamp = datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    last = runs.get("last")
    if not isinstance(last, dict) or str(last.get("at", "")) < stamp:
        runs["last"] = {"at": stamp, "event": event, "outcome": "spooled", "session_id": None,
                        "note": None}
    return runs


def _turn_path(store_root: Root, agent: str, session_id: str) -> str:
    return os.path.join(hooks_dir(store_root), "turns", f"{agent}-{session_id}.json")


def note_turn(store_root: Root, agent: str, session_id: str) -> None:
    """Remember that a prompt of the session was submitted now: its current turn starts here."""
    try:
        write_json(store_root, _turn_path(store_root, agent, session_id), {"at": utc_now_iso()})
    except (OSError, SessionKeeperError):  # bookkeeping never fails a hook
        return


def turn_of(store_root: Root, agent: str, session_id: str) -> str | None:
    """When the session's latest prompt was submitted (a UTC timestamp), or None."""
    at = (_read(_turn_path(store_root, agent, session_id)) or {}).get("at")
    return at if isinstance(at, str) else None


PASS_MAX_AGE_S = 24 * 3600
"""How long an acknowledgement waits for the resume it lets through."""


def _pass_path(store_root: Root, agent: str, session_id: str) -> str:
    return os.path.join(hooks_dir(store_root), "passes", f"{agent}-{session_id}.json")


def take_pass(store_root: Root, agent: str, session_id: str) -> bool:
    """Use up the acknowledgement of an agent session's next resume; True when there was one."""
    path = _pass_path(store_root, agent, session_id)
    data = _read(path)
    if not _unlink(path):
        return False
    import time

    made = data.get("at_s") if data else None
    return isinstance(made, (int, float)) and time.time() - made <= PASS_MAX_AGE_S


def acknowledge(store_root: Root, agent: str, session_id: str) -> str:
    """Let a stopped or gated resume continue: lift its gate, and let the next resume through once."""
    import time

    lifted = lift_gate(store_root, agent, session_id)
    write_json(store_root, _pass_path(store_root, agent, session_id),
               {"at_s": time.time(), "at": utc_now_iso()})
    return ("the gate is lifted: the session's next prompt goes through; "
            if lifted else "") + ("its next resume goes through once (within 24 hours), "
                                  "with what changed told to the model")


def _deferred_path(store_root: Root, agent: str, session_id: str) -> str:
    return os.path.join(hooks_dir(store_root), "deferred", f"{agent}-{session_id}.jsonl")


def defer(store_root: Root, agent: str, session_id: str, record: dict[str, Any]) -> None:
    """Keep a lifecycle record for the journal's next writer (the fast resume check writes none)."""
    path = _deferred_path(store_root, agent, session_id)
    ensure_private_dir(store_root)
    ensure_private_dir(os.path.dirname(path), within=store_root)
    line = jsontext.dumps({**record, "at": utc_now_iso()}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def take_deferred(store_root: Root, agent: str, session_id: str) -> list[dict[str, Any]]:
    """The deferred records of a journal, taken (the file is gone afterwards); bad lines skipped."""
    path = _deferred_path(store_root, agent, session_id)
    taken = f"{path}.{os.getpid()}"
    try:
        os.replace(path, taken)
    except FileNotFoundError:
        return []
    try:
        with open(taken, "rb") as handle:
            lines = handle.read().splitlines()
    finally:
        _unlink(taken)
    out = []
    for line in lines:
        try:
            record = jsontext.loads(line)
        except ValueError:  # UnicodeDecodeError too
            continue
        if isinstance(record, dict) and isinstance(record.get("source"), str):
            out.append(record)
    return out
