"""The unit-test tree mirrors the package (issue 27 item 5): the tests of `agents/claude.py` are in
`tests/unit/agents/test_claude.py`, so a newcomer finds them without grep, and the mirror stays
true as code moves (no fixture: the files of tests/unit/ and server/sessionkeeper/)."""

from __future__ import annotations

from pathlib import Path

UNIT = Path(__file__).resolve().parent
PACKAGE = UNIT.parents[1] / "server" / "sessionkeeper"

ROOT_ONLY = {
    "test_architecture.py": "the layering of the whole package: imports between all its layers",
    "test_command_imports.py": "what every command, hook and the server load, across the layers",
    "test_protocol_schema.py": "the committed schema.json and PROTOCOL.md against every handler",
    "test_test_tree.py": "this file: the layout of tests/unit/ itself",
}
"""Test files at tests/unit/ that test no one module, each with the reason it stays there."""


def _test_folders() -> list[Path]:
    return sorted(p for p in UNIT.rglob("*") if p.is_dir() and p.name != "__pycache__"
                  and not any(part.startswith(".") for part in p.relative_to(UNIT).parts))


def _misplaced(path: Path) -> str | None:
    """Why the test file at `path` is not where the module it tests is, or None when it is.

    A test file in tests/unit/<folder>/ is named `test_<name>.py` or `test_<name>_<feature>.py`
    where <name> is a module of server/sessionkeeper/<folder>/ or that package itself (its
    `__init__.py`), or exactly `test_<subpackage>.py` for a subpackage's `__init__.py`.
    """
    relative = path.relative_to(UNIT)
    if relative.parent == Path(".") and relative.name in ROOT_ONLY:
        return None
    folder = PACKAGE / relative.parent
    if not (folder / "__init__.py").is_file():
        return f"{relative}: server/sessionkeeper/{relative.parent.as_posix()}/ is no package"
    stem = path.stem.removeprefix("test_")
    modules = {p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__")}
    if relative.parent != Path("."):
        modules.add(folder.name)
    subpackages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    if stem in subpackages or any(stem == m or stem.startswith(m + "_") for m in modules):
        return None
    where = f"server/sessionkeeper/{relative.parent.as_posix()}/".replace("/./", "/")
    return f"{relative}: named after no module of {where}"


def test_every_unit_test_file_sits_where_the_module_it_tests_sits() -> None:
    """Every tests/unit/**/test_*.py against the package's modules as they are now."""
    misplaced = [why for path in sorted(UNIT.rglob("test_*.py")) if (why := _misplaced(path))]
    assert misplaced == []


def test_every_folder_of_the_unit_tests_is_a_package() -> None:
    """Every folder under tests/unit/ (pytest needs packages: the basenames repeat)."""
    assert [str(p.relative_to(UNIT)) for p in _test_folders() if not (p / "__init__.py").is_file()] == []


def test_every_file_kept_at_the_root_is_there() -> None:
    """The ROOT_ONLY list, so that it names only files that exist."""
    assert [name for name in ROOT_ONLY if not (UNIT / name).is_file()] == []
