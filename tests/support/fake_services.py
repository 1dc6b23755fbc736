"""Loopback services an outbound-request test talks to: a fake API that records what reached it, a
listener that only counts connections (a destination that must never be reached), a fake OAuth provider.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeService:
    server: ThreadingHTTPServer
    seen: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    # OAuth: code -> (access token, the PKCE challenge the authorization request carried)
    tokens: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def _pkce(form: dict) -> str:
    digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _handler(service: FakeService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

        def log_message(self, *args) -> None:  # quiet
            pass

        def _answer(self, status: int, body: object, headers: dict | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            service.seen.append(
                Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            if url.path == "/redirect":
                self._answer(int(query.get("status", 302)), {}, {"Location": query["to"]})
            elif url.path == "/hang":
                service.release.wait(30)
                self._answer(200, {"slept": True})
            elif url.path == "/big":
                data = b"x" * int(query["bytes"])
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            elif url.path == "/oauth/token":
                form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
                grant = service.tokens.pop(form.get("code", ""), None)
                if form.get("grant_type") == "authorization_code" and grant and _pkce(form) == grant[1]:
                    token = grant[0]
                    self._answer(
                        200, {"access_token": token, "refresh_token": f"r-{token}", "expires_in": 3600}
                    )
                elif form.get("grant_type") == "refresh_token":
                    token = f"fresh-{form['refresh_token']}"
                    self._answer(200, {"access_token": token, "expires_in": 3600})
                else:
                    self._answer(400, {"error": "invalid_grant"})
            else:
                self._answer(
                    200,
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body.decode("utf-8", "replace"),
                    },
                )

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    return Handler


def start_fake_service(host: str = "127.0.0.1") -> FakeService:
    service = FakeService(server=None)  # type: ignore[arg-type]
    server = ThreadingHTTPServer((host, 0), _handler(service))
    server.daemon_threads = True
    service.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return service


class ConnectionCounter:
    """A listener that accepts and counts connections, answering nothing: a place no request may reach."""

    def __init__(self, host: str = "127.0.0.2"):
        self.sock = socket.create_server((host, 0))
        self.sock.settimeout(0.2)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def wait_until(predicate, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
