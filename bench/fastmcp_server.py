"""FastMCP serving an unisolated ``echo`` tool behind bearer auth: a peer of the platform in bench_gateway.py.

FastMCP is not a dependency of the platform (it pins ``mcp`` on its own schedule), so bench_gateway.py runs
this file in the separate venv that ``_setup.fastmcp_python`` creates:

    <venv>/bin/python bench/fastmcp_server.py PORT TOKEN [TOOLS]

``echo(text)`` answers ``{"echo": text}`` in the server process itself (no isolation), after FastMCP's
``StaticTokenVerifier`` has checked the bearer token (any other token gets 401). With TOOLS (default 1) it
lists that many tools, the others shaped like the platform's filler tools (listed, never called).
"""

import sys

import uvicorn
from fastmcp import FastMCP
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.tools.base import Tool
from mcp.types import ToolAnnotations


def build(token: str, tools: int) -> FastMCP:
    verifier = StaticTokenVerifier({token: {"client_id": "bench", "scopes": []}})
    server = FastMCP("bench-fastmcp", auth=verifier)

    @server.tool
    def echo(text: str = "pong") -> dict:
        """Return the text it is given."""
        return {"echo": text}

    for i in range(tools - 1):
        server.add_tool(
            Tool(
                name=f"tool_{i}",
                description=f"Filler tool {i}.",
                parameters={"type": "object", "properties": {"q": {"type": "string"}}},
                annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False),
            )
        )
    return server


if __name__ == "__main__":
    port, token = int(sys.argv[1]), sys.argv[2]
    server = build(token, int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    uvicorn.run(server.http_app(path="/mcp"), host="127.0.0.1", port=port, log_level="warning")
