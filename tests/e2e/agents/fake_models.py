"""Fake model APIs for driving the real agent CLIs offline: Anthropic Messages and OpenAI Responses.

Loopback only (127.0.0.1, a free port), stdlib only, one daemon thread per server. The reply is
scripted by the conversation itself, so a test steers it through its prompt:
- a user text has a line `RUNS: <n> <command>` and fewer than n tool results came back → one more
  shell call running it (a turn of n tool calls, for the hooks' benchmark);
- the newest turn holds a tool result → a final text `DONE: <last line of that result>`;
- the newest user text has a line `RUN: <command>` and a shell tool is offered (Claude Code's
  `Bash`, Codex's `exec_command`/`shell`, Hermes Agent's `terminal`, OpenClaw's `exec`) → one
  shell call
  (its id is remembered in `calls`, so a test can find it in the agent's log);
- anything else (titles, summaries, probes) → the text `OK`.
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

_RUN = re.compile(r"^(?:\[[^\]\n]*\] )?RUN: (.+)$", re.M)  # OpenClaw prefixes "[<time>] "
_RUNS = re.compile(r"^RUNS: (\d+) (.+)$", re.M)
Event = tuple[str, dict[str, Any]]


def _texts(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(part["text"] for part in parts
                     if isinstance(part, dict) and isinstance(part.get("text"), str))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


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
        turns = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") != "system"]
        last = turns[-1] if turns else {}
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        content = last.get("content") if last.get("role") == "user" else None
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        block: dict[str, Any]
        again = self._again(sum(1 for m in turns if m.get("role") == "user"
                                and isinstance(m.get("content"), list)
                                for b in m["content"] if isinstance(b, dict)
                                and b.get("type") == "tool_result"),
                            [_texts(m.get("content")) for m in turns if m.get("role") == "user"])
        if again is not None and "Bash" in tools:
            block, stop = {"type": "tool_use", "id": self.new_call("toolu_"), "name": "Bash",
                           "input": {"command": again, "description": "scripted"}}, "tool_use"
        elif results:
            result = results[-1].get("content")
            text = result if isinstance(result, str) else _texts(result)
            block, stop = {"type": "text", "text": "DONE: " + _last_line(text)}, "end_turn"
        else:
            runs = _RUN.findall(_texts(content)) if content is not None else []
            for earlier in reversed(turns[:-1]) if not runs and content is not None else ():
                if earlier.get("role") != "user":  # OpenClaw adds a context turn after the prompt
                    break
                runs = _RUN.findall(_texts(earlier.get("content")))
                if runs:
                    break
            if runs and "Bash" in tools:
                block, stop = {"type": "tool_use", "id": self.new_call("toolu_"), "name": "Bash",
                               "input": {"command": runs[-1].strip(), "description": "scripted"}}, "tool_use"
            elif runs and "terminal" in tools:  # Hermes Agent's shell tool
                block, stop = {"type": "tool_use", "id": self.new_call("toolu_"), "name": "terminal",
                               "input": {"command": runs[-1].strip()}}, "tool_use"
            elif runs and "exec" in tools:  # OpenClaw's shell tool
                block, stop = {"type": "tool_use", "id": self.new_call("toolu_"), "name": "exec",
                               "input": {"command": runs[-1].strip(), "title": "scripted"}}, "tool_use"
            else:
                block, stop = {"type": "text", "text": "OK"}, "end_turn"
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

    def _again(self, done: int, texts: list[str]) -> str | None:
        """The command of one more call of a `RUNS: n command` turn, None when it is over."""
        for text in texts:
            found = _RUNS.search(text)
            if found and done < int(found.group(1)):
                return found.group(2).strip()
        return None

    def _openai_item(self, body: dict[str, Any]) -> dict[str, Any]:
        items = body.get("input")
        items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items
        entries = [e for e in items or [] if isinstance(e, dict)]
        again = self._again(sum(1 for e in entries if e.get("type") in ("function_call_output",
                                                                        "custom_tool_call_output")),
                            [_texts(e.get("content")) for e in entries
                             if e.get("type", "message") == "message" and e.get("role") == "user"])
        if again is not None:
            return self._shell_call(body.get("tools") or [], again)
        for entry in reversed(items or []):
            if not isinstance(entry, dict):
                continue
            kind = entry.get("type", "message")
            if kind in ("function_call_output", "custom_tool_call_output"):
                output = entry.get("output")
                return _message("DONE: " + _last_line(output if isinstance(output, str) else _texts(output)))
            if kind == "function_call" or (kind == "message" and entry.get("role") == "assistant"):
                return _message("OK")
            if kind == "message" and entry.get("role") == "user":
                runs = _RUN.findall(_texts(entry.get("content")))
                if runs:
                    return self._shell_call(body.get("tools") or [], runs[-1].strip())
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
