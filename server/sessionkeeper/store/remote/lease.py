"""One machine at a time continues a thread: a lease row on the shared server, with an expiry.

Invariants: a lease is taken in one transaction that either inserts it, renews our own, or takes
over one whose expiry has passed — never one another holder still renews (that is ThreadBusy,
naming the machine, user and process holding it). Every take, take-over and release is a row of
the lease log, and a take-over says whose lease it ended: a machine that died holding a thread is
taken over only after its lease ran out, and never silently. While held, a daemon thread renews
the lease every third of its time on a connection of its own; a renewal that finds the lease
gone marks it `lost` (another machine took it over after we could not renew it in time).
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ...errors import ThreadBusy
from ..index.pg_connection import connect, failure
from ..index.pg_url import shown
from .schema import LEASE_LOG, LEASES

ENV_LEASE = "SESSIONKEEPER_LEASE_S"
LEASE_S = 60.0
"""How long a lease lasts without a renewal ($SESSIONKEEPER_LEASE_S)."""


def lease_seconds() -> float:
    """The lease time: $SESSIONKEEPER_LEASE_S when it is a positive number, else LEASE_S."""
    try:
        value = float(os.environ.get(ENV_LEASE, ""))
    except ValueError:
        return LEASE_S
    return value if value > 0 else LEASE_S


@dataclass(frozen=True)
class Taken:
    """What taking a lease found: a previous holder whose lease had run out, if any."""

    took_over_from: str | None = None  # "user@machine (pid N), expired at …"


class Lease:
    """A held lease of one thread (released by `release`, renewed meanwhile)."""

    def __init__(self, url: str, *, thread_id: str, machine: str, user: str | None,
                 seconds: float | None = None) -> None:
        self.url = url
        self.thread_id = thread_id
        self.machine = machine
        self.user = user
        self.seconds = seconds or lease_seconds()
        self.holder = f"{machine}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self.lost = False
        self._db: Any = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def _conn(self) -> Any:
        if self._db is None or self._db.closed:
            self._db = connect(self.url, autocommit=True)
        return self._db

    def take(self) -> Taken:
        """Take the lease (ThreadBusy when another holder has it) and start renewing it."""
        import psycopg

        db = self._conn()
        try:
            with db.transaction():
                before = db.execute(
                    f"SELECT machine, os_user, pid, expires_at, expires_at < now() FROM {LEASES} "
                    "WHERE thread_id = %s FOR UPDATE", (self.thread_id,)).fetchone()
                taken = db.execute(
                    f"INSERT INTO {LEASES} AS l (thread_id, holder, machine, os_user, pid, "
                    "acquired_at, expires_at) VALUES(%s, %s, %s, %s, %s, now(), now() + "
                    "make_interval(secs => %s)) ON CONFLICT(thread_id) DO UPDATE SET "
                    "holder = excluded.holder, machine = excluded.machine, os_user = "
                    "excluded.os_user, pid = excluded.pid, acquired_at = excluded.acquired_at, "
                    "expires_at = excluded.expires_at WHERE l.expires_at < now() "
                    "RETURNING thread_id", (self.thread_id, self.holder, self.machine, self.user,
                                            os.getpid(), self.seconds)).fetchone()
                if taken is None:
                    holder = db.execute(f"SELECT machine, os_user, pid, expires_at FROM {LEASES} "
                                        "WHERE thread_id = %s", (self.thread_id,)).fetchone()
                    raise _busy(self.thread_id, holder)
                previous = None
                if before is not None and before[4]:
                    previous = f"{_who(before)}, whose lease ran out at {_utc(before[3])}"
                db.execute(f"INSERT INTO {LEASE_LOG}(thread_id, event, holder, machine, os_user, "
                           "previous_machine) VALUES(%s, %s, %s, %s, %s, %s)",
                           (self.thread_id, "taken_over" if previous else "taken", self.holder,
                            self.machine, self.user, before[0] if previous and before else None))
        except psycopg.Error as exc:
            raise failure(f"shared index {shown(self.url)}: lease", exc, self.url) from None
        self._renewer = threading.Thread(target=self._renew_until_released, daemon=True,
                                         name=f"sessionkeeper-lease-{self.thread_id[:8]}")
        self._renewer.start()
        return Taken(took_over_from=previous)

    def renew(self) -> bool:
        """Push the expiry on; False (and `lost`) when the lease is no longer ours."""
        db = self._conn()
        found = db.execute(f"UPDATE {LEASES} SET expires_at = now() + make_interval(secs => %s) "
                           "WHERE thread_id = %s AND holder = %s RETURNING thread_id",
                           (self.seconds, self.thread_id, self.holder)).fetchone()
        if found is None:
            self.lost = True
        return found is not None

    def _renew_until_released(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            try:
                if not self.renew():
                    return
            except Exception:  # the server is away: try again at the next beat
                with contextlib.suppress(Exception):
                    self._db.close()

    def release(self) -> None:
        """Stop renewing and give the lease back (fails soft: it then runs out by itself)."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        try:
            db = self._conn()
            with db.transaction():
                gone = db.execute(f"DELETE FROM {LEASES} WHERE thread_id = %s AND holder = %s "
                                  "RETURNING thread_id", (self.thread_id, self.holder)).fetchone()
                if gone is not None:
                    db.execute(f"INSERT INTO {LEASE_LOG}(thread_id, event, holder, machine, "
                               "os_user) VALUES(%s, 'released', %s, %s, %s)",
                               (self.thread_id, self.holder, self.machine, self.user))
        except Exception:  # unreachable: the lease runs out by itself (`seconds`)
            pass
        finally:
            if self._db is not None:
                with contextlib.suppress(Exception):
                    self._db.close()


def _who(row: Any) -> str:
    machine, user, pid = row[0], row[1], row[2]
    return f"{user + '@' if user else ''}{machine} (pid {pid})"


def _busy(thread_id: str, holder: Any) -> ThreadBusy:
    if holder is None:  # released between our look and our take: try again
        return ThreadBusy(f"thread {thread_id} changed hands while its lease was taken; try again")
    return ThreadBusy(f"thread {thread_id} is being continued on {_who(holder)}; its lease runs "
                      f"until {_utc(holder[3])} unless renewed")


def _utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
