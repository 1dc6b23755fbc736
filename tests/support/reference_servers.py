"""Local servers a schema ``$ref`` can point at, to prove the platform never fetches one.

``RecordingServer`` answers every GET with a schema holding ``SECRET`` and records the paths asked
for. ``SilentListener`` accepts connections into its backlog and never answers, as a URL that
hangs would: a fetch would block, and ``was_contacted`` tells whether anything connected.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = "SECRET-7d41c0-never-fetched"


class RecordingServer:
    def __init__(self) -> None:
        self.paths: list[str] = []
        paths = self.paths

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                paths.append(self.path)
                body = json.dumps({"type": "string", "const": SECRET}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/schema+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/schema.json"

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


class SilentListener:
    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)

    @property
    def url(self) -> str:
        host, port = self._sock.getsockname()
        return f"http://{host}:{port}/schema.json"

    def was_contacted(self) -> bool:
        self._sock.setblocking(False)
        try:
            conn, _ = self._sock.accept()
        except BlockingIOError:
            return False
        conn.close()
        return True

    def __enter__(self) -> SilentListener:
        return self

    def __exit__(self, *exc) -> None:
        self._sock.close()
