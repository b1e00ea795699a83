"""Hermes's session reset policy: which one governs a chat, and whether it has reset since a message.

Hermes's gateway resets a chat's session by policy (`gateway/config.py` SessionResetPolicy):
mode `daily` (at `at_hour`, local time), `idle` (after `idle_minutes` without a message), `both`
(whichever comes first) or `none` (never; Hermes's default since July 2026). The policy is read
as Hermes reads it: `gateway.json` (`default_reset_policy`, `reset_by_type`, `reset_by_platform`),
then `config.yaml` `session_reset` (or `gateway.session_reset`) as the default, then the
SESSION_IDLE_MINUTES / SESSION_RESET_HOUR environment variables; a platform's policy wins over a
chat type's, which wins over the default. A reset that came due since the last message is a
lifecycle fact of the chat (the gateway starts a new session on its next message), never drift.
Terminal sessions (`cli`, ...) have no reset policy. Reading the files is read-only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

MODES = ("daily", "idle", "both", "none")


@dataclass(frozen=True)
class ResetPolicy:
    """One reset policy as Hermes states it, and where it was found."""

    mode: str = "none"
    at_hour: int = 4
    idle_minutes: int = 1440
    source: str = "Hermes's default"

    @classmethod
    def of(cls, raw: object, source: str, base: ResetPolicy | None = None) -> ResetPolicy:
        """A policy from a config mapping (a missing or odd value keeps the base's / default's)."""
        base = base or cls()
        data = raw if isinstance(raw, Mapping) else {}
        mode = data.get("mode")
        return cls(mode=mode if mode in MODES else base.mode,
                   at_hour=_int(data.get("at_hour"), base.at_hour, 0, 23),
                   idle_minutes=_int(data.get("idle_minutes"), base.idle_minutes, 1, 10**7),
                   source=source)

    def describe(self) -> str:
        """The policy in a few words."""
        if self.mode == "none":
            return "none (never resets by itself)"
        parts = []
        if self.mode in ("daily", "both"):
            parts.append(f"daily at {self.at_hour:02d}:00 local time")
        if self.mode in ("idle", "both"):
            parts.append(f"after {self.idle_minutes} min idle")
        return f"{self.mode} ({' or '.join(parts)})"

    def reset_since(self, last: datetime, now: datetime) -> tuple[str, datetime] | None:
        """("idle" | "daily", when) of the first reset due after a message at `last` (local naive
        datetimes, as Hermes compares them), or None when the chat is still live at `now`."""
        due: list[tuple[datetime, str]] = []
        if self.mode in ("idle", "both"):
            deadline = last + timedelta(minutes=self.idle_minutes)
            if now > deadline:
                due.append((deadline, "idle"))
        if self.mode in ("daily", "both"):
            boundary = last.replace(hour=self.at_hour, minute=0, second=0, microsecond=0)
            if boundary <= last:
                boundary += timedelta(days=1)
            if now >= boundary:
                due.append((boundary, "daily"))
        if not due:
            return None
        when, kind = due[0]  # idle first when both came due: Hermes names the reset so
        return kind, when


def _int(value: object, default: int, low: int, high: int) -> int:
    if isinstance(value, bool):
        return default
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return default
    return number if low <= number <= high else default


def _yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    import yaml  # type: ignore[import-untyped]  # only when a Hermes chat is checked

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def policy_for(home: Path, *, platform: str, chat_type: str | None,
               env: Mapping[str, str] | None = None) -> ResetPolicy:
    """The policy that governs chats of `platform` / `chat_type` in one Hermes home."""
    env = os.environ if env is None else env
    gateway = _json(home / "gateway.json")
    default = ResetPolicy.of(gateway.get("default_reset_policy"), "gateway.json default_reset_policy") \
        if "default_reset_policy" in gateway else ResetPolicy()
    config = _yaml(home / "config.yaml")
    section = config.get("session_reset")
    if "session_reset" not in config and isinstance(config.get("gateway"), dict):
        section = config["gateway"].get("session_reset")
    if isinstance(section, dict) and section:
        default = ResetPolicy.of(section, "config.yaml session_reset")
    tuned = {k: env[v] for k, v in (("idle_minutes", "SESSION_IDLE_MINUTES"),
                                    ("at_hour", "SESSION_RESET_HOUR")) if env.get(v)}
    if tuned:
        default = ResetPolicy.of({"mode": default.mode, **tuned}, default.source + " (+ env)", default)
    by_platform = gateway.get("reset_by_platform")
    if isinstance(by_platform, dict) and platform in by_platform:
        return ResetPolicy.of(by_platform[platform], f"gateway.json reset_by_platform.{platform}")
    by_type = gateway.get("reset_by_type")
    if chat_type and isinstance(by_type, dict) and chat_type in by_type:
        return ResetPolicy.of(by_type[chat_type], f"gateway.json reset_by_type.{chat_type}")
    return default


def notes(meta: Mapping[str, Any], *, now: float | None = None) -> list[str]:
    """The report lines of a Hermes chat: its policy, and a reset due since its last message."""
    agent = (meta.get("data") or {}).get("agent") or {}
    context = agent.get("source_context") or {}
    if not context.get("chat"):
        return []
    path = str(agent.get("path") or "")
    home = Path(path.rpartition("#")[0]).parent
    platform, chat_type = str(context.get("platform")), context.get("chat_type")
    policy = policy_for(home, platform=platform, chat_type=chat_type)
    where = f"{platform}/{chat_type}" if chat_type else platform
    out = [f"Hermes reset policy for {where} chats: {policy.describe()} — from {policy.source}"]
    ended = agent.get("ended") or {}
    if ended.get("reason") in ("idle", "daily"):
        out.append(f"Hermes reset this chat's session ({ended['reason']}) at {ended.get('at')}: a "
                   "lifecycle fact, not drift; resuming it reopens the old context")
        return out
    last = _local(agent.get("last_message_at") or meta.get("ts"))
    if last is None or ended.get("reason"):
        return out
    current = datetime.fromtimestamp(now) if now is not None else datetime.now()
    due = policy.reset_since(last, current)
    if due is not None:
        kind, when = due
        article = "an" if kind == "idle" else "a"
        out.append(f"{article} {kind} reset of this chat came due at {when.isoformat(timespec='minutes')} "
                   f"(local time), after its last message at {last.isoformat(timespec='minutes')}: "
                   "the gateway starts a new session on the chat's next message (a lifecycle fact, "
                   "not drift); `hermes --resume` still reopens this one")
    return out


def _local(stamp: object) -> datetime | None:
    """One of our UTC ISO stamps as a naive local datetime (how Hermes's gateway compares times)."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone().replace(tzinfo=None)
