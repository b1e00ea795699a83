"""Fixtures shared by the e2e modules: the resident reader's (`_resident`: `thread`, `resident`);
a module's own fixture of the same name wins in that module (test_cli.py's `thread`)."""

from ._resident import resident, thread  # noqa: F401 - fixtures, found by pytest by name
