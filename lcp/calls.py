"""``lcp call``: one tools/call through the tenant's MCP endpoint, with the official MCP SDK client."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from lcp.config import Login
from lcp.exceptions import TOKEN_REFUSED, LcpError


def mcp_url(login: Login) -> str:
    return f"{login.url}/t/{login.tenant}/mcp"


def call_tool(login: Login, wire_name: str, arguments: dict) -> dict[str, Any]:
    """The tool's result as the MCP endpoint answers it: ``isError``, ``structuredContent``, ``text``.

    Raises:
        LcpError: unreachable, a refused token, or no such tool for this caller.
    """
    try:
        return asyncio.run(_call(login, wire_name, arguments))
    except* MCPError as group:
        error = group.exceptions[0]
        where = f"for this token in '{login.tenant}'"
        raise LcpError(f"no tool '{wire_name}' {where} ({error}): `lcp apps` lists the wire names") from None
    except* httpx2.HTTPStatusError as group:
        status = group.exceptions[0].response.status_code
        if status == 401:
            raise LcpError(TOKEN_REFUSED) from None
        if status == 404:
            where = mcp_url(login)
            raise LcpError(f"no MCP endpoint at {where}: unknown tenant, or its MCP server is off") from None
        raise LcpError(f"the MCP endpoint answered HTTP {status}") from None
    except* httpx2.TransportError:
        raise LcpError(f"cannot reach {login.url}: is the platform running there?") from None


async def _call(login: Login, wire_name: str, arguments: dict) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {login.token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http:
        async with Client(streamable_http_client(mcp_url(login), http_client=http)) as client:
            result = await client.call_tool(wire_name, arguments)
    text = "\n".join(block.text for block in result.content if block.type == "text")
    return {"isError": bool(result.is_error), "structuredContent": result.structured_content, "text": text}
