"""The one ASGI app: the MCP gateway at /t/<tenant>/mcp, the builder endpoint at
/t/<tenant>/builder/mcp, Django for everything else.

Django cannot take the lifespan scope, so this router owns it and runs the gateway's session
manager (and its change notifier) for the life of the process.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowcode_platform.settings")

from django.conf import settings  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402

from lowcode_platform.request_threads import RequestThreads  # noqa: E402

# Static files come from WhiteNoise's middleware (settings.MIDDLEWARE), with DEBUG on or off.
django_app = RequestThreads(get_asgi_application())

import anyio  # noqa: E402

from apps_runtime.jobs.clock import InProcessClock  # noqa: E402
from apps_runtime.sandbox import SandboxUnavailable, close_sandbox, get_sandbox  # noqa: E402
from apps_runtime.superseded import retire_forever  # noqa: E402
from builder.endpoint import BuilderEndpoint  # noqa: E402
from core.logs import trace_id, trace_id_from  # noqa: E402
from lowcode_platform.metrics import register_process_gauges, sample_forever  # noqa: E402
from lowcode_platform.tasks import purge_if_due  # noqa: E402
from mcp_gateway.tasks import sweep as sweep_tool_tasks  # noqa: E402
from mcp_gateway.transport.app import Gateway  # noqa: E402  (needs Django set up)

gateway = Gateway()
builder = BuilderEndpoint()  # /t/<tenant>/builder/mcp: tenant admins' tools that build apps
register_process_gauges(gateway)


async def _lifespan(receive, send) -> None:
    await receive()  # lifespan.startup
    try:
        # Probe the isolation tiers now: below SANDBOX_MIN_TIER the server must not start at all.
        await anyio.to_thread.run_sync(get_sandbox().start)
    except SandboxUnavailable as err:
        await send({"type": "lifespan.startup.failed", "message": str(err)})
        return
    # With no broker there is no beat: this process ticks the job scheduler itself.
    clock = InProcessClock(also=[sweep_tool_tasks, purge_if_due]) if settings.JOBS_IN_PROCESS_CLOCK else None
    if clock is not None:
        clock.start()
    try:
        async with gateway.lifespan(), builder.lifespan(), anyio.create_task_group() as tasks:
            tasks.start_soon(sample_forever)
            tasks.start_soon(retire_forever)
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            tasks.cancel_scope.cancel()
    finally:
        if clock is not None:
            clock.stop()
        # Its zygote, warm workers, scratch mounts and dir: uvicorn runs no atexit hook after SIGTERM.
        await anyio.to_thread.run_sync(close_sandbox)
    await send({"type": "lifespan.shutdown.complete"})


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    trace_id.set(trace_id_from(_traceparent(scope)))
    if scope["type"] == "http" and gateway.handles(scope["path"]):
        await gateway(scope, receive, send)
    elif scope["type"] == "http" and builder.handles(scope["path"]):
        await builder(scope, receive, send)
    else:
        await django_app(scope, receive, send)


def _traceparent(scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"traceparent":
            return value.decode("latin-1")
    return None
