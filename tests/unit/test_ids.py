"""Ids from outside are validated before they touch any path."""

from __future__ import annotations

import pytest

from sessionkeeper import ids
from sessionkeeper.errors import InvalidId
from sessionkeeper.store.layout import Layout

BAD = ["../x", "/etc/passwd", "a/../../b", "..\\x", "x\x00y", "CON", "a" * 300,
       "7B0C4A52-3F7E-4C1E-9A43-1F2D5E6A7B80", "7b0c4a52-3f7e-4c1e-9a43-1f2d5e6a7b8０", "", None, 42]


@pytest.mark.parametrize("raw", BAD)
def test_thread_and_session_ids_reject_anything_but_a_lowercase_uuid(raw):
    """Fixture: none; traversal, absolute paths, NUL, 300 chars, upper case, look-alikes."""
    with pytest.raises(InvalidId):
        ids.thread_id(raw)
    with pytest.raises(InvalidId):
        ids.session_id(raw)


@pytest.mark.parametrize("raw", ["../x", "a/b", "x\x00y", "a" * 65, "", "op 1", "op.1"])
def test_operation_ids_reject_paths_and_oversized_values(raw):
    """Fixture: none."""
    with pytest.raises(InvalidId):
        ids.operation_id(raw)


def test_valid_ids_pass_unchanged():
    """Fixture: none."""
    fresh = ids.new_id()
    assert ids.thread_id(fresh) == fresh
    assert ids.operation_id("toolu_01ABC-x") == "toolu_01ABC-x"


def test_layout_refuses_an_invalid_id_before_building_a_path(tmp_path):
    """Fixture: a temporary store root."""
    layout = Layout(tmp_path)
    with pytest.raises(InvalidId):
        layout.lock_path("../../etc/passwd")


def test_error_message_names_the_bad_value_briefly():
    """Fixture: none; a 300-character id is shortened in the message."""
    with pytest.raises(InvalidId, match=r"invalid thread id 'aaa.*\.\.\.: expected a lowercase UUID"):
        ids.thread_id("a" * 300)


def test_every_typed_error_has_its_own_rpc_code_or_shares_its_parents() -> None:
    """Fixture: every SessionKeeperError subclass; shared on purpose: JSON-RPC's own invalid
    params (-32602) and the store's failures (-32013)."""
    from sessionkeeper import errors

    def family(cls: type) -> list[type]:
        return [cls] + [c for sub in cls.__subclasses__() for c in family(sub)]

    by_code: dict[int, list[type]] = {}
    for cls in family(errors.SessionKeeperError):
        by_code.setdefault(cls.rpc_code, []).append(cls)
    shared = {-32602: {"InvalidEvent", "InvalidWorkspace", "InvalidParams"},
              -32013: {"StoreDamaged", "StoreFull", "StoreIOError"}}
    for code, classes in by_code.items():
        roots = {c.__name__ for c in classes
                 if not any(issubclass(c, o) and c is not o for o in classes)}
        assert len(roots) == 1 or roots <= shared.get(code, set()), (code, sorted(roots))
