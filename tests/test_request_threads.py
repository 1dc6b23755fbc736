"""Django's requests run on threads that outlive them, one request at a time per thread."""

from __future__ import annotations

import threading

import anyio
from asgiref.sync import ThreadSensitiveContext, sync_to_async

from lowcode_platform.request_threads import RequestThreads


class ThreadRecorder:
    """An ASGI app whose requests note the thread their synchronous code runs on.

    Like Django's ASGI handler, it opens a ``ThreadSensitiveContext`` for each request.
    """

    def __init__(self) -> None:
        self.threads: list[int] = []
        self.gate: anyio.Event | None = None

    async def __call__(self, scope, receive, send) -> None:
        async with ThreadSensitiveContext():
            await sync_to_async(self._note, thread_sensitive=True)()
            if self.gate is not None:
                await self.gate.wait()
            await sync_to_async(self._note, thread_sensitive=True)()

    def _note(self) -> None:
        self.threads.append(threading.get_ident())


async def request(app) -> None:
    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        return None

    await app({"type": "http"}, receive, send)


def test_one_request_after_another_reuses_the_same_thread():
    recorder = ThreadRecorder()
    app = RequestThreads(recorder)

    async def main():
        await request(app)
        await request(app)

    anyio.run(main)

    assert len(set(recorder.threads)) == 1
    assert threading.get_ident() not in recorder.threads


def test_requests_at_the_same_time_each_get_a_thread_of_their_own_for_their_whole_life():
    recorder = ThreadRecorder()
    app = RequestThreads(recorder)

    async def main():
        recorder.gate = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(request, app)
            tasks.start_soon(request, app)
            with anyio.fail_after(10):
                while len(recorder.threads) < 2:
                    await anyio.sleep(0.01)
            recorder.gate.set()

    anyio.run(main)

    first, second, *rest = recorder.threads
    assert first != second
    assert sorted(rest) == sorted([first, second])
