"""A scripted OpenAI-compatible chat-completions server on loopback: a test double of a remote provider.

It speaks the wire format (``POST <base>/chat/completions``), records every request it gets, and
answers each one with the next turn of its script: a turn is a function of the request body that
returns the assistant message (tool calls or text). No model SDK is replaced in the platform's process.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Turn = Callable[[dict], dict]


def tool_call_turn(*calls: tuple[str, dict]) -> Turn:
    """A turn that asks for these tool calls (name, arguments)."""

    def turn(body: dict) -> dict:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{len(body['messages'])}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
                for i, (name, arguments) in enumerate(calls)
            ],
        }

    return turn


def answer_turn(make_text: Callable[[list[str]], str]) -> Turn:
    """A final answer built from the tool results the request carries (``role: tool`` messages)."""

    def turn(body: dict) -> dict:
        results = [m["content"] for m in body["messages"] if m.get("role") == "tool"]
        return {"role": "assistant", "content": make_text([str(r) for r in results])}

    return turn


@dataclass
class ScriptedProvider:
    turns: list[Turn]
    requests: list[dict] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""

    def answer(self, body: dict) -> dict:
        turn = self.turns[min(len(self.requests) - 1, len(self.turns) - 1)]
        message = turn(body)
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27},
        }


@contextmanager
def scripted_provider(*turns: Turn) -> Iterator[ScriptedProvider]:
    """The server on a free loopback port, in a thread; ``base_url`` ends in ``/v1``."""
    provider = ScriptedProvider(list(turns))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server hook's name)
            length = int(self.headers.get("Content-Length") or 0)
            body: Any = json.loads(self.rfile.read(length) or b"{}")
            provider.requests.append(body)
            provider.headers.append({k.lower(): v for k, v in self.headers.items()})
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            self._send(200, provider.answer(body))

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    provider.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, name="scripted-provider", daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
