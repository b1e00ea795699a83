"""Typed errors of Session Keeper; each carries a CLI exit code and a JSON-RPC code."""

from __future__ import annotations

import errno

TYPE_CHECKING = False  # typing is not imported: a tool hook's process imports this module
if TYPE_CHECKING:
    from typing import Any


class SessionKeeperError(Exception):
    """Base of every error Session Keeper raises on purpose."""

    exit_code = 70
    rpc_code = -32603
    name = "internal_error"

    def to_dict(self) -> dict[str, str]:
        """Return the error as a JSON-able dict for `--json` and JSON-RPC data."""
        return {"error": self.name, "message": str(self)}


class InvalidId(SessionKeeperError, ValueError):
    """An id from outside failed validation before it touched any path."""

    exit_code = 64
    rpc_code = -32010
    name = "invalid_id"


class InvalidEvent(SessionKeeperError, ValueError):
    """An event failed schema validation."""

    exit_code = 65
    rpc_code = -32602
    name = "invalid_event"


class OperationConflict(InvalidEvent):
    """An operation id re-used with other arguments: not a re-delivery, nothing is reused."""

    rpc_code = -32015
    name = "operation_conflict"


class InvalidWorkspace(SessionKeeperError, ValueError):
    """A workspace that is not an existing directory."""

    exit_code = 64
    rpc_code = -32602
    name = "invalid_workspace"


class GitRefused(SessionKeeperError, ValueError):
    """git will not read the repository (dubious ownership, a bare repository...); says why."""

    exit_code = 64
    rpc_code = -32018
    name = "git_refused"


class UnknownThread(SessionKeeperError, LookupError):
    """No thread or session with that id exists in the store."""

    exit_code = 66
    rpc_code = -32011
    name = "unknown_thread"


class UnknownVersion(UnknownThread):
    """The thread's file history names no file version with that hash."""

    name = "unknown_version"


class ThreadBusy(SessionKeeperError):
    """Another process holds the writer lock of the thread."""

    exit_code = 75
    rpc_code = -32012
    name = "thread_busy"


class ResumeRefused(SessionKeeperError):
    """A framework adapter would continue a thread whose resume check found drift or a block.

    `report` is the resume report (its differences say why); nothing was continued.
    """

    exit_code = 10
    rpc_code = -32019
    name = "resume_refused"

    def __init__(self, message: str, report: Any = None) -> None:
        super().__init__(message)
        self.report = report


class StoreDamaged(SessionKeeperError):
    """A rollout or the store directory cannot be used as it is."""

    exit_code = 74
    rpc_code = -32013
    name = "store_damaged"


class SchemaTooNew(StoreDamaged):
    """A rollout was written by a newer schema than this build understands."""

    name = "schema_too_new"


class SessionReadOnly(SessionKeeperError):
    """The session no longer accepts events (closed, or a failed fsync made it read-only)."""

    exit_code = 73
    rpc_code = -32014
    name = "read_only"


class DurabilityLost(SessionReadOnly):
    """An fsync failed: nothing after the last durable point may be trusted; never retried."""

    name = "durability_lost"


class StoreFull(SessionKeeperError, OSError):
    """A write failed for lack of space, quota or file size (ENOSPC, EDQUOT, EFBIG); the partial
    record was cut off and nothing of it was acknowledged."""

    exit_code = 74
    rpc_code = -32013
    name = "store_full"


class StoreIOError(SessionKeeperError, OSError):
    """A write or an fsync of the store failed for another reason than space (EIO, ...); what
    failed was not acknowledged, and a write was cut off."""

    exit_code = 74
    rpc_code = -32013
    name = "store_io_error"


_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def storage_error(exc: OSError, what: str) -> StoreFull | StoreIOError:
    """The typed error for a failed write to the store: StoreFull for space, StoreIOError else."""
    kind = StoreFull if exc.errno in _NO_SPACE else StoreIOError
    return kind(f"{what}: {exc}")


class IndexUnavailable(SessionKeeperError):
    """The SQLite index could not be used; callers fall back to the rollouts."""

    name = "index_unavailable"


class IndexBusy(IndexUnavailable):
    """Another process holds the index's write lock: nothing is wrong with it, try later."""

    exit_code = 75  # busy, as a thread is: try again
    name = "index_busy"


class IndexFull(IndexBusy):
    """The disk under the index is full: nothing is wrong with the index, try once there is space."""

    exit_code = 74
    name = "index_full"


class BlobUnavailable(StoreDamaged):
    """The content of a blob cannot be returned; `key` names the blob."""

    rpc_code = -32016
    name = "blob_unavailable"

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"blob {key}: {reason}")
        self.key = key
        self.reason = reason

    def to_dict(self) -> dict[str, str]:
        """Return the error with the blob key."""
        return {**super().to_dict(), "blob": self.key}


class BlobMissing(BlobUnavailable):
    """A blob (or the base it is stored against) is not in the store."""

    name = "blob_missing"


class BlobCorrupt(BlobUnavailable):
    """A blob's bytes do not decode, or decode to content that does not match its hash."""

    rpc_code = -32017
    name = "blob_corrupt"


class AgentLogUnreadable(StoreDamaged):
    """An agent's log file (Codex, Claude Code) vanished or cannot be opened; the others are read."""

    name = "agent_log_unreadable"


class HookInputInvalid(InvalidEvent):
    """What an agent's hook sent on stdin is not a hook event Session Keeper can act on."""

    name = "hook_input_invalid"


class AgentConfigInvalid(SessionKeeperError):
    """An agent's config file (settings.json, hooks.json, config.toml) cannot be read as such;
    it is left exactly as it is."""

    exit_code = 65
    rpc_code = -32020
    name = "agent_config_invalid"


class ToolInputInvalid(InvalidEvent):
    """A tool call's arguments name nothing the session has (a seq beyond it, a path outside it).

    Nothing was read beyond the check, nothing was changed."""

    name = "tool_input_invalid"


class ToolNotAllowed(SessionKeeperError):
    """The user's policy does not let this tool act (an agent's MCP `rewind`, off by default)."""

    exit_code = 77
    rpc_code = -32021
    name = "tool_not_allowed"
