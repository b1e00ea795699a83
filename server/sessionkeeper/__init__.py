"""Session Keeper: record agent sessions as append-only logs and resume them honestly."""

__version__ = "0.1.0"
