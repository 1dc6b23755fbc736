"""A scripted model provider on loopback: a test double of a remote provider, speaking its wire format.

``kind="openai"``: OpenAI-compatible chat completions (``POST /v1/chat/completions``);
``kind="anthropic"``: Anthropic's Messages API (``POST /v1/messages``). It records every request
and answers each with the next turn of its script: a turn is a function of the tool results the
request carries, returning tool calls to make or a final text. No model SDK is replaced in the
platform's process.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A turn: the tool results so far (text) -> {"tool_calls": [(name, arguments), ...]} or {"text": ...}.
Turn = Callable[[list[str]], dict]
USAGE = (20, 7)  # input and output tokens of every answer
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


def tool_call_turn(*calls: tuple[str, dict]) -> Turn:
    """A turn that asks for these tool calls (name, arguments)."""
    return lambda results: {"tool_calls": list(calls)}


def answer_turn(make_text: Callable[[list[str]], str]) -> Turn:
    """A final answer built from the tool results the request carries."""
    return lambda results: {"text": make_text(results)}


def _results(body: dict, kind: str) -> list[str]:
    if kind == "openai":
        return [str(m["content"]) for m in body["messages"] if m.get("role") == "tool"]
    return [
        json.dumps(block.get("content")) if not isinstance(block.get("content"), str) else block["content"]
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def _openai_answer(n: int, body: dict, reply: dict) -> dict:
    if "tool_calls" in reply:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(reply["tool_calls"])
            ],
        }
    else:
        message = {"role": "assistant", "content": reply["text"]}
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if "tool_calls" in reply else "stop",
            }
        ],
        "usage": {"prompt_tokens": USAGE[0], "completion_tokens": USAGE[1], "total_tokens": sum(USAGE)},
    }


def _anthropic_answer(n: int, body: dict, reply: dict) -> dict:
    if "tool_calls" in reply:
        content = [
            {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": args}
            for i, (name, args) in enumerate(reply["tool_calls"])
        ]
    else:
        content = [{"type": "text", "text": reply["text"]}]
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": content,
        "stop_reason": "tool_use" if "tool_calls" in reply else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": USAGE[0], "output_tokens": USAGE[1]},
    }


@dataclass
class ScriptedProvider:
    kind: str
    turns: list[Turn]
    requests: list[dict] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""

    def answer(self, body: dict) -> dict:
        n = len(self.requests)
        reply = self.turns[min(n - 1, len(self.turns) - 1)](_results(body, self.kind))
        return (_openai_answer if self.kind == "openai" else _anthropic_answer)(n, body, reply)


@contextmanager
def scripted_provider(*turns: Turn, kind: str = "openai") -> Iterator[ScriptedProvider]:
    """The server on a free loopback port, in a thread; ``base_url`` is what the operator would list."""
    provider = ScriptedProvider(kind, list(turns))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server hook's name)
            length = int(self.headers.get("Content-Length") or 0)
            body: Any = json.loads(self.rfile.read(length) or b"{}")
            provider.requests.append(body)
            provider.headers.append({k.lower(): v for k, v in self.headers.items()})
            if self.path.split("?")[0] != PATHS[kind]:
                self._send(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})
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
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    provider.base_url = origin + "/v1" if kind == "openai" else origin  # the SDKs' own conventions
    thread = threading.Thread(target=server.serve_forever, name="scripted-provider", daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
