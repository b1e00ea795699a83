"""Restorable subsystems: importing this package imports each module in it, which registers itself.

Adding a subsystem is adding one module here with a `@register`ed `Subsystem` subclass; reports
and surfaces show every registered subsystem by its name, summary and headline.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import (
    REGISTRY,
    Difference,
    Findings,
    Invalidation,
    Subsystem,
    SubsystemReport,
    Workspace,
    register,
)


def load_all() -> dict[str, type[Subsystem]]:
    """Import every module of this package (idempotent) and return the registry."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return REGISTRY


load_all()

__all__ = [
    "REGISTRY", "Difference", "Findings", "Invalidation", "Subsystem", "SubsystemReport", "Workspace",
    "load_all",
    "register",
]
