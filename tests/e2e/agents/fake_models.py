"""Fake model APIs for driving the real agent CLIs offline: Anthropic Messages and OpenAI Responses.

Loopback only (127.0.0.1, a free port), stdlib only, one daemon thread per server. The reply is
scripted by the conversation itself, so a test steers it through its prompt: the newest user text
holding script lines is the turn's script, one tool call per line, in order —
- `RUN: <command>` → a shell call, when a shell tool is offered (Claude Code's `Bash`, Codex's
  `exec_command`/`shell`, Hermes Agent's `terminal`, OpenClaw's `exec`; OpenClaw's `[<time>] `
  before the line is allowed);
- `RUNS: <n> <command>` → n such calls, one after another (a turn of n tool calls, for the
  hooks' benchmark);
- `CALL: <tool> [<JSON arguments>]` → a call of the offered tool named `<tool>` or ending in
  `__<tool>` (an MCP server's tool: Claude Code's `mcp__<server>__<tool>`, a tool in one of Codex's
  `mcp__<server>` namespaces); a tool Claude Code only names as deferred is first loaded with its
  ToolSearch (`select:<full name>`), as a model does;
- every step done (the newest turn holds the last step's result) → a final text
  `DONE: <last line of that result>`; a tool result without a script → the same;
- anything else (titles, summaries, probes) → the text `OK`.
Every tool call's id is remembered in `calls` (ToolSearch loads aside), so a test can find it in
the agent's log.
Every request is kept in `requests` (method, path, JSON body). Runnable by hand too:
`python fake_models.py anthropic|openai` prints the port and serves until interrupted.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_STEP = re.compile(r"^(?:\[[^\]\n]*\] )?(RUNS|RUN|CALL): (.+)$", re.M)  # OpenClaw: "[<time>] "
_SEARCH = "ToolSearch"
_CALLS = ("function_call", "custom_tool_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
Event = tuple[str, dict[str, Any]]
Step = tuple[str, str]  # ("RUN", command) | ("CALL", "tool {json}")


def _texts(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(part["text"] for part in parts
                     if isinstance(part, dict) and isinstance(part.get("text"), str))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _steps(text: str) -> list[Step]:
    """The script lines of a prompt, in order (a `RUNS: n command` line as n RUN steps)."""
    steps: list[Step] = []
    for kind, rest in _STEP.findall(text):
        if kind == "RUNS":
            count, _, command = rest.strip().partition(" ")
            steps += [("RUN", command.strip())] * int(count) if count.isdigit() else []
        else:
            steps.append((kind, rest.strip()))
    return steps


def _call_of(step: str) -> tuple[str, dict[str, Any]]:
    """A CALL step's tool name and arguments (`{}` when none are given)."""
    name, _, raw = step.partition(" ")
    args = json.loads(raw) if raw.strip() else {}
    if not isinstance(args, dict):
        raise ValueError(f"CALL {name}: the arguments are not a JSON object")
    return name, args


def _matches(offered: str, wanted: str) -> bool:
    return offered == wanted or offered.endswith("__" + wanted)


def _deferred(body: dict[str, Any], wanted: str) -> str | None:
    """The full name of an MCP tool Claude Code lists only as deferred (loaded by ToolSearch)."""
    pattern = re.compile(r"(?<![A-Za-z0-9_])mcp__[A-Za-z0-9_-]+?__" + re.escape(wanted) + r"(?![A-Za-z0-9_])")
    for text in strings(body):
        found = pattern.search(text)
        if found:
            return found.group(0)
    return None


def strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)


class FakeModel:
    """One fake API server; `kind` is "anthropic" or "openai"."""

    def __init__(self, kind: str) -> None:
        if kind not in ("anthropic", "openai"):
            raise ValueError(kind)
        self.kind = kind
        self.requests: list[dict[str, Any]] = []
        self.calls: list[str] = []  # tool call ids handed out, in order
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on (on 127.0.0.1)."""
        return int(self._server.server_address[1])

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def note(self, method: str, path: str, body: Any) -> None:
        """Keep one request."""
        with self._lock:
            self.requests.append({"method": method, "path": path, "body": body})

    def new_call(self, prefix: str) -> str:
        """A fresh tool call id, remembered."""
        call = prefix + uuid.uuid4().hex[:24]
        with self._lock:
            self.calls.append(call)
        return call

    # -- Anthropic Messages ----------------------------------------------------------------
    def anthropic_events(self, body: dict[str, Any]) -> Iterator[Event]:
        """The SSE events of one /v1/messages reply."""
        block, stop = self._anthropic_block(body)
        usage = {"input_tokens": len(json.dumps(body)) // 4, "output_tokens": 5,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {"id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
                   "model": body.get("model", "claude-fake"), "content": [], "stop_reason": None,
                   "stop_sequence": None, "usage": usage}
        yield "message_start", {"type": "message_start", "message": message}
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "text", "text": ""}}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {**block, "input": {}}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": 0}
        yield "message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": usage["output_tokens"]}}
        yield "message_stop", {"type": "message_stop"}

    def _anthropic_block(self, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The one content block of the reply and its stop reason."""
        turns = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") != "system"]
        tools = [t["name"] for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")]
        last = turns[-1] if turns else {}
        results = _results(last)
        start = next((n for n in range(len(turns) - 1, -1, -1) if turns[n].get("role") == "user"
                      and not _results(turns[n]) and _steps(_texts(turns[n].get("content")))), None)
        steps = _steps(_texts(turns[start].get("content"))) if start is not None else []
        after = turns[start + 1:] if start is not None else []
        made = [b for m in after if m.get("role") == "assistant"
                for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
        done = [b for b in made if b.get("name") != _SEARCH]
        at_prompt = start is not None and all(  # OpenClaw adds a context turn after the prompt
            t.get("role") == "user" and not _results(t) for t in after)
        if len(done) < len(steps) and (results or at_prompt):
            kind, rest = steps[len(done)]
            if kind == "RUN" and "Bash" in tools:
                return self._anthropic_use("Bash", {"command": rest, "description": "scripted"}), "tool_use"
            if kind == "RUN" and "terminal" in tools:  # Hermes Agent's shell tool
                return self._anthropic_use("terminal", {"command": rest}), "tool_use"
            if kind == "RUN" and "exec" in tools:  # OpenClaw's shell tool
                return self._anthropic_use("exec", {"command": rest, "title": "scripted"}), "tool_use"
            if kind == "CALL":
                name, args = _call_of(rest)
                offered = next((t for t in tools if _matches(t, name)), None)
                if offered is not None:
                    return self._anthropic_use(offered, args), "tool_use"
                full = _deferred(body, name)
                loaded = made and made[-1].get("name") == _SEARCH
                if full is not None and _SEARCH in tools and not loaded:
                    return {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": _SEARCH,
                            "input": {"query": f"select:{full}"}}, "tool_use"
                if full is not None:
                    return self._anthropic_use(full, args), "tool_use"
        if results:
            result = results[-1].get("content")
            text = result if isinstance(result, str) else _texts(result)
            return {"type": "text", "text": "DONE: " + _last_line(text)}, "end_turn"
        return {"type": "text", "text": "OK"}, "end_turn"

    def _anthropic_use(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.new_call("toolu_"), "name": name, "input": args}

    # -- OpenAI Responses -------------------------------------------------------------------
    def openai_events(self, body: dict[str, Any]) -> Iterator[Event]:
        """The SSE events of one /v1/responses reply."""
        item = self._openai_item(body)
        tokens_in = len(json.dumps(body)) // 4
        usage = {"input_tokens": tokens_in, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 6, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": tokens_in + 6}
        response = {"id": "resp_" + uuid.uuid4().hex[:20], "object": "response", "status": "in_progress",
                    "model": body.get("model", "gpt-fake"), "output": []}
        yield "response.created", {"type": "response.created", "response": response}
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                             "item": {**item, "content": []} if item["type"] == "message"
                                             else item}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield "response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                 "output_index": 0, "content_index": 0, "delta": text}
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                            "item": item}
        yield "response.completed", {"type": "response.completed",
                                     "response": {**response, "status": "completed", "output": [item],
                                                  "usage": usage}}

    def _openai_item(self, body: dict[str, Any]) -> dict[str, Any]:
        items = body.get("input")
        items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items
        entries = [e for e in items or [] if isinstance(e, dict)]
        start = next((n for n in range(len(entries) - 1, -1, -1)
                      if entries[n].get("type", "message") == "message" and entries[n].get("role") == "user"
                      and _steps(_texts(entries[n].get("content")))), None)
        steps = _steps(_texts(entries[start].get("content"))) if start is not None else []
        after = entries[start + 1:] if start is not None else entries
        done = [e for e in after if e.get("type") in _CALLS]
        outputs = [e for e in after if e.get("type") in _OUTPUTS]
        moves = [e for e in after if e.get("type") in (*_CALLS, *_OUTPUTS)
                 or (e.get("type", "message") == "message" and e.get("role") == "assistant")]
        answered = bool(moves) and moves[-1].get("type") in _OUTPUTS
        if start is not None and len(done) < len(steps) and (answered or not moves):
            kind, rest = steps[len(done)]
            tools = body.get("tools") or []
            if kind == "RUN":
                return self._shell_call(tools, rest)
            name, args = _call_of(rest)
            found = _offered(tools, name)
            if found is not None:
                namespace, function = found
                item: dict[str, Any] = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:20],
                                        "call_id": self.new_call("call_"), "name": function,
                                        "arguments": json.dumps(args), "status": "completed"}
                if namespace is not None:
                    item["namespace"] = namespace
                return item
        if outputs and answered:
            output = outputs[-1].get("output")
            return _message("DONE: " + _last_line(output if isinstance(output, str) else _texts(output)))
        return _message("OK")

    def _shell_call(self, tools: list[Any], command: str) -> dict[str, Any]:
        names = {t.get("name") for t in tools if isinstance(t, dict)}
        args: dict[str, Any]
        if "exec_command" in names:
            name, args = "exec_command", {"cmd": command}
        elif "shell_command" in names:
            name, args = "shell_command", {"command": command}
        else:
            name, args = "shell", {"command": ["bash", "-lc", command]}
        return {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:20],
                "call_id": self.new_call("call_"), "name": name, "arguments": json.dumps(args),
                "status": "completed"}


def _results(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of an Anthropic user message."""
    content = message.get("content") if message.get("role") == "user" else None
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
        if isinstance(content, list) else []


def _offered(tools: list[Any], wanted: str) -> tuple[str | None, str] | None:
    """(namespace, name) of the offered OpenAI tool named `wanted` (or `…__wanted`), or None."""
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and _matches(str(inner.get("name")), wanted):
                    return str(tool.get("name")), str(inner["name"])
        elif tool.get("name") and _matches(str(tool["name"]), wanted):
            return None, str(tool["name"])
    return None


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_" + uuid.uuid4().hex[:20], "role": "assistant",
            "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # quiet
            return

        def _send_json(self, code: int, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            model.note("GET", self.path, None)
            if self.path.split("?")[0].endswith("/models"):
                self._send_json(200, {"object": "list", "data": [], "has_more": False})
            else:
                self._send_json(404, {"error": {"type": "not_found", "message": self.path}})

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                body = None
            model.note("POST", self.path, body)
            path = self.path.split("?")[0]
            if not isinstance(body, dict):
                self._send_json(400, {"error": {"type": "invalid_request", "message": "not JSON"}})
            elif model.kind == "anthropic" and path == "/v1/messages/count_tokens":
                self._send_json(200, {"input_tokens": len(raw) // 4})
            elif model.kind == "anthropic" and path == "/v1/messages":
                self._stream(model.anthropic_events(body), body)
            elif model.kind == "openai" and path.endswith("/responses"):
                self._stream(model.openai_events(body), body)
            else:
                self._send_json(404, {"error": {"type": "not_found", "message": path}})

        def _stream(self, events: Iterator[Event], body: dict[str, Any]) -> None:
            if not body.get("stream"):  # the whole message at once (Anthropic only asks this way)
                done = [data for name, data in events]
                message = dict(done[0]["message"])
                block = done[1]["content_block"]
                delta = done[2]["delta"]
                if block["type"] == "text":
                    block = {"type": "text", "text": delta["text"]}
                else:
                    block = {**block, "input": json.loads(delta["partial_json"])}
                message.update(content=[block], stop_reason=done[4]["delta"]["stop_reason"])
                self._send_json(200, message)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for name, data in events:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

    return Handler


if __name__ == "__main__":
    with FakeModel(sys.argv[1] if len(sys.argv) > 1 else "anthropic") as fake:
        print(fake.port, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
