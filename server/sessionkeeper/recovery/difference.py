"""One difference between the workspace now and what was recorded (the comparison's answer).

Its own module: the listing's estimate compares baselines and needs this class alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Difference:
    """One way the current workspace differs from what was recorded (drift or block)."""

    kind: str  # cwd_missing other_repository relocated branch head file_changed file_missing permissions …
    recorded: Any = None
    current: Any = None
    detail: str = ""
