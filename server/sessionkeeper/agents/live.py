"""Claude Code's `parentUuid` tree, as far as needed to tell the live branch from rewound ones.

The live branch is the chain of ancestors of the newest conversation line (user, assistant,
system, attachment). A conversation line without a parent (the first, or one Claude wrote as a
new root such as `compact_boundary`, whose `logicalParentUuid` is followed) continues the chain,
and so does one whose parent never appeared in the file (it was on a damaged line, say).
Only the leaf and the non-conversation lines hanging off it (`tips`) are kept between reads; the
whole map lives for one full read. An incremental read that meets a branch (a rewind: a line whose
parent is not the leaf) sets `restart`, and the caller re-reads the file whole.
"""

from __future__ import annotations

from typing import Any

CONVERSATION = frozenset({"user", "assistant", "system", "attachment"})


class Chain:
    """The tree of one transcript: extend it line by line, then ask which lines are live."""

    def __init__(self, state: dict[str, Any], *, incremental: bool) -> None:
        self.state = state  # {"leaf": uuid | None, "tips": [uuid, ...]}: persisted in the checkpoint
        self.incremental = incremental
        self.parents: dict[str, str | None] = {}  # this read only
        self.conversation: list[str] = []  # conversation uuids seen in this read
        self.branched = False
        self.restart = False
        self.dead = 0

    def add(self, line: dict[str, Any], conversation: bool) -> str | None:
        """Place one line; return its uuid (the tag of the records it yields) or None if unplaced."""
        uid = line.get("uuid")
        if uid.__class__ is not str or not uid:
            return None
        parent = line.get("parentUuid")
        state = self.state
        if conversation and parent is not None and parent == state["leaf"]:  # the common case
            if not self.incremental:
                self.parents[uid] = parent
                self.conversation.append(uid)
            state["leaf"] = uid
            if state["tips"]:
                state["tips"] = []
            return uid
        parent = parent or line.get("logicalParentUuid")
        leaf = state["leaf"]
        if not isinstance(parent, str):
            if not conversation:
                return None  # a detached progress-like line: outside the conversation
            parent = leaf
        extends = leaf is None or parent == leaf or parent in self.state["tips"]
        if not extends and not self.incremental and parent not in self.parents:
            extends = True  # a parent never seen here (a damaged line, another file): continue
        if not extends and self.incremental:
            self.restart = self.restart or conversation
            return None
        if not self.incremental:
            self.parents[uid] = parent
        if conversation:
            self.branched = self.branched or not extends
            self.state["leaf"], self.state["tips"] = uid, []
            if not self.incremental:
                self.conversation.append(uid)
        elif extends:
            tips = self.state["tips"]
            tips.append(uid)
            del tips[:-16]
        return uid

    def live(self) -> set[str] | None:
        """The uuids on the newest line's chain when this read saw a branch; None when all are live."""
        if not self.branched:
            return None
        live: set[str] = set()
        node = self.state["leaf"]
        while node is not None and node not in live:
            live.add(node)
            node = self.parents.get(node)
        self.dead = sum(1 for uid in self.conversation if uid not in live)
        return live
