"""The environment Session Keeper runs git in: no repository-local variables, no locks, no prompts.

Standard library only (`gitrun` and a tool hook's own git calls, `hooks.spawn`, share it).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "LANGUAGE": "C"}
LOCAL_ENV = frozenset({
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR"})
"""What `git rev-parse --local-env-vars` lists (git 2.39): the variables that tie a git command
to one repository (its git dir, work tree, index, objects, ...)."""
_KEPT = frozenset({"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"})
"""`git -c` settings, not a repository: git passes them on too when it runs a command in another
repository (a submodule: prepare_other_repo_env in git's run-command.c)."""


def environment(extra: Mapping[str, str] = _ENV) -> dict[str, str]:
    """Our environment for a git command in a workspace: without the repository-local variables
    (an agent's GIT_DIR or GIT_INDEX_FILE never makes us read another repository), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in LOCAL_ENV or k in _KEPT}
    env.update(extra)
    return env
