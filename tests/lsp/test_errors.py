"""Bad params get specific JSON-RPC error codes, and the server keeps answering."""

from __future__ import annotations

import uuid

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from ._client import Client

INVALID_PARAMS, INVALID_ID, UNKNOWN_THREAD, READ_ONLY = -32602, -32010, -32011, -32014


async def error_code(client: Client, method: str, params: object) -> int:
    """The JSON-RPC error code a request gets (fails the test if it succeeds)."""
    with pytest.raises(JsonRpcException) as info:
        await client.request(method, params)
    return info.value.code


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module")
async def client(module_server) -> Client:
    """Fixture: `module_server` (one server for this module); a freshly started session."""
    client, workspace = module_server
    client.workspace = workspace
    client.started = await client.request("session/start", {"workspace": str(workspace)})
    return client


@pytest.mark.parametrize(("method", "params"), [
    ("session/show", {"thread_id": "not-a-uuid"}),
    ("session/show", {"thread_id": 42}),
    ("session/archive", {"thread_id": "../../etc/passwd"}),
    ("session/fork", {"thread_id": "ABCDEF00-0000-0000-0000-000000000000"}),
    ("session/record", {"session_id": "x", "events": [{"type": "message"}]}),
    ("session/checkResume", {"thread_id": "", "workspace": "/tmp"}),
])
async def test_malformed_ids_get_invalid_id(client: Client, method: str, params: dict) -> None:
    """Fixture: `client` (server with a started session)."""
    assert await error_code(client, method, params) == INVALID_ID


async def test_unknown_thread_and_session_get_unknown_thread(client: Client) -> None:
    """Fixture: `client`."""
    missing = str(uuid.uuid4())
    assert await error_code(client, "session/show", {"thread_id": missing}) == UNKNOWN_THREAD
    assert await error_code(client, "session/resume", {"thread_id": missing}) == UNKNOWN_THREAD
    assert await error_code(client, "session/record", {
        "session_id": missing, "events": [{"type": "message", "role": "user", "text": "x"}],
    }) == UNKNOWN_THREAD


@pytest.mark.parametrize(("method", "params"), [
    ("session/list", {"limit": "many"}),
    ("session/list", {"limit": 0}),
    ("session/list", {"cursor": "bm90IGEgY3Vyc29y"}),
    ("session/list", [1, 2]),
    ("session/show", {}),
    ("session/start", {"workspace": "/nonexistent/dir"}),
    ("session/start", {"permissions": {"approval_mode": 5}}),
    ("session/start", {"permissions": "all"}),
    ("session/resume", {"thread_id": None, "latest": True, "decision": "maybe"}),
    ("session/compact", {"session_id": str(uuid.uuid4()), "summary": ""}),
])
async def test_wrong_shapes_get_invalid_params(client: Client, method: str, params: object) -> None:
    """Fixture: `client`."""
    assert await error_code(client, method, params) == INVALID_PARAMS


async def test_invalid_events_are_rejected_whole_and_nothing_is_written(client: Client) -> None:
    """Fixture: `client`."""
    session = client.started["session_id"]
    good = {"type": "message", "role": "user", "text": "hello"}
    for events in ([good, {"type": "message", "role": "robot", "text": "x"}],
                   [good, {"type": "no_such_type"}], "not a list", [],
                   [good, {"type": ["message"]}],
                   [good, {"type": "snapshot", "through_seq": 1, "state": {}}],
                   [good, {"type": "lifecycle", "source": "resume"}]):
        code = await error_code(client, "session/record", {"session_id": session,
                                                           "events": events})
        assert code == INVALID_PARAMS
    acks = await client.request("session/record", {"session_id": session, "events": [good]})
    shown = await client.request("session/show", {"thread_id": client.started["thread_id"]})
    assert acks["acks"][0]["seq"] == max(e["seq"] for e in shown["timeline"]) + 1


async def test_closed_session_is_read_only_and_server_survives(client: Client) -> None:
    """Fixture: `client`."""
    first = client.started["session_id"]
    await client.request("session/start", {"workspace": str(client.workspace)})
    code = await error_code(client, "session/record", {
        "session_id": first, "events": [{"type": "message", "role": "user", "text": "late"}]})
    assert code == READ_ONLY
    assert (await client.request("session/current", {}))["session_id"] != first
