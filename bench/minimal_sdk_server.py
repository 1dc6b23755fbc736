"""The SDK's own minimal server doing the same trivial work as the benchmark tools: a baseline.

    python bench/minimal_sdk_server.py PORT [TOOLS]

With TOOLS (default 1) it lists that many tools, shaped like the platform's filler tools, in one
page (the SDK's own listing has no pagination); ``ping`` is always the first.
"""

from __future__ import annotations

import contextlib
import json
import sys

import mcp.types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

PING = types.Tool(name="ping", description="Return a constant.", input_schema={"type": "object"})


def filler(i: int) -> types.Tool:
    return types.Tool(
        name=f"tool_{i}",
        description=f"Filler tool {i}.",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
        annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False),
    )


TOOLS = [PING] + [filler(i) for i in range(int(sys.argv[2]) - 1 if len(sys.argv) > 2 else 0)]


async def list_tools(ctx: ServerRequestContext, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    body = {"pong": True}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(body))], structured_content=body
    )


server = Server("minimal", on_list_tools=list_tools, on_call_tool=call_tool)
manager = StreamableHTTPSessionManager(app=server)


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await receive()
        async with manager.run():
            await send({"type": "lifespan.startup.complete"})
            await receive()
        await send({"type": "lifespan.shutdown.complete"})
        return
    await manager.handle_request(scope, receive, send)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
