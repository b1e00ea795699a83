"""`sessionkeeper demo`: the whole story in a scratch directory, with a real git repo and a real crash."""

from .run import run_demo

__all__ = ["run_demo"]
