"""The `session/` methods, one module per area; importing this package registers them all (@rpc).

Adding a method is adding a handler to the module of its area (or a new module listed here).
"""

from . import content, sessions, workspace

__all__ = ["content", "sessions", "workspace"]
