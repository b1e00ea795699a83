"""The validator is built without reading class sources; the JSON Schema still has the field
docstrings (they are read for it alone)."""

from __future__ import annotations

from sessionkeeper import events
from sessionkeeper.session.validate import event_body, json_schema


def test_the_json_schema_keeps_the_field_docstrings() -> None:
    """Fixture: the schema of a rollout line, generated in process."""
    schema = json_schema()
    message = schema["$defs"]["Message"]["properties"]
    described = sum(bool(p.get("description")) for d in schema["$defs"].values()
                    for p in d.get("properties", {}).values())
    assert message["text"].get("description") and message["role"].get("description")
    assert described > 100  # as many as when validation read them too (130 today)
    assert "use_attribute_docstrings" not in events.STRICT  # validation stays undocumented


def test_validation_still_refuses_what_it_refused_after_a_schema_was_generated() -> None:
    """Fixture: a message with an unknown field, validated after json_schema()."""
    json_schema()
    try:
        event_body({"type": "message", "role": "user", "text": "t", "colour": "red"})
    except Exception as exc:  # noqa: BLE001 - the typed error is checked by name
        assert type(exc).__name__ == "InvalidEvent"
    else:
        raise AssertionError("an unknown field was accepted")
