"""`sessionkeeper demo`: the whole story in a scratch directory, with a real git repo and a real crash.

It may import the Keeper (`api`), session and what lies below them; never a surface.
"""

from .run import run_demo

__all__ = ["run_demo"]
