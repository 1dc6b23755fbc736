"""The one ASGI app: the MCP gateway at /t/<tenant>/mcp, Django for everything else."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowcode_platform.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        # Django cannot take the lifespan scope; acknowledge it here.
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    await django_app(scope, receive, send)
