"""Thin handlers that act on the workspace itself: switching back to a thread's recorded branch.

A switch back is the one request that changes the user's files, so it is a dry run unless asked
otherwise, and it refuses (running nothing) when the checkout could lose work: uncommitted
changes to tracked files, or the branch checked out in another worktree (git would refuse too).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..protocol import SwitchBackParams, SwitchBackResult
from ..rpc import rpc
from ..server import SessionKeeperServer as Server

if TYPE_CHECKING:  # git and the worktree state are loaded by the first switch back
    from ...events import GitBaseline
    from ..gitops import Refusal

log = logging.getLogger("sessionkeeper.lsp")


def _recorded(ls: Server, thread_id: str) -> GitBaseline | None:
    """The baseline the thread's latest session was recorded in (domain worker)."""
    from ...recovery.subsystems.worktree import Worktree

    current = ls.session
    state = current.state if current is not None and current.thread_id == thread_id \
        else ls.keeper.replay(thread_id).state
    try:
        return state.get(Worktree).recorded()
    except ValueError:  # unreadable: nothing to switch back to
        return None


@rpc("session/switchBack", SwitchBackParams)
async def session_switch_back(ls: Server, p: SwitchBackParams) -> SwitchBackResult:
    """Check out the branch a thread was recorded on (dry run unless dry_run is false)."""
    from .. import gitops

    workspace = ls.workspace_of(p.workspace)

    def work() -> SwitchBackResult:
        plan = gitops.switch_back_plan(workspace, _recorded(ls, p.thread_id))
        refused: Refusal | None = plan.refused
        message, ran = plan.message, False
        if refused is None and not p.dry_run:
            failure = gitops.checkout(workspace, plan)
            refused, ran = ("failed", False) if failure else (None, True)
            message = failure or f"ran `{plan.command}`"
        return SwitchBackResult(branch=plan.branch, command=plan.command, ran=ran,
                                refused=refused, message=message, worktree=plan.worktree,
                                uncommitted=plan.uncommitted)

    result = await ls.run(work)
    log.info("switch back %s: %s%s", p.thread_id, "dry run, " if p.dry_run else "",
             result.refused or ("ran" if result.ran else "can run"))
    return result
