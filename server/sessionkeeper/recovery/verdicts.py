"""Verdicts, decisions and the choices each verdict offers: defined here and nowhere else.

A module of its own (no dataclasses) so a command line can offer the choices without loading
the report types.
"""

from __future__ import annotations

from typing import Literal, get_args

Verdict = Literal["ok", "drift", "blocked"]
"""ok: identical, continue · drift: same repository, something differs · blocked: cannot go on here."""
Decision = Literal["continue", "switch_back", "fork", "cancel", "relocate", "export"]
"""What the user (or CI policy) decides about a resume."""
VERDICTS: tuple[str, ...] = get_args(Verdict)
DECISIONS: tuple[str, ...] = get_args(Decision)
CHOICES: dict[str, list[Decision]] = {
    "ok": [],
    "drift": ["continue", "switch_back", "fork", "cancel"],
    "blocked": ["relocate", "fork", "export"],
}
"""The decisions each verdict offers, in the order a surface shows them."""
