"""Threads for Django's requests that outlive the request, so their database connections do too.

Django's ASGI handler runs the synchronous part of each request on a thread made for that request
(a fresh ``ThreadSensitiveContext``), and a database connection belongs to its thread: so every
front-end request opened a connection, whatever ``CONN_MAX_AGE`` said, and dropped it with the
thread. Here each request gets a thread of its own for its whole life, as before, but taken from
the idle ones when there are any; an idle thread keeps its connection for the next request
(Django still closes it past ``CONN_MAX_AGE`` or when broken, at the start and end of each request).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext
from asgiref.typing import ASGI3Application, ASGIReceiveCallable, ASGISendCallable, Scope

# Idle request threads kept; a burst beyond it gets new threads, which end with their request.
IDLE_THREADS = 16


class RequestThreads:
    """ASGI middleware: each HTTP request's synchronous code runs on one (reused) thread."""

    def __init__(self, app: ASGI3Application, idle: int = IDLE_THREADS):
        self.app = app
        self._idle: list[ThreadPoolExecutor] = []
        self._keep = idle

    async def __call__(self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        executor = self._idle.pop() if self._idle else ThreadPoolExecutor(1, "django-request")
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.app(scope, receive, send)
        finally:
            # Event-loop thread only: no lock needed around the list.
            if len(self._idle) < self._keep:
                self._idle.append(executor)
            else:
                executor.shutdown(wait=False)
