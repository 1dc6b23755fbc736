"""List a tenant's MCP tools and call one, with the official MCP Python SDK.

Run it from the checkout (the platform's virtualenv already has the SDK), with a token that
``make demo`` printed:

    .venv/bin/python examples/mcp_client.py --token lcp_... \\
        --call acme_case_portal_find_case --arguments '{"query": "ada"}'

Elsewhere, ``pip install "mcp>=2.3,<2.4"`` first (it brings ``httpx2``). ``--url`` defaults to the
demo's endpoint; ``MCP_URL`` and ``MCP_TOKEN`` in the environment stand in for ``--url`` and
``--token``. Exit status: 0; 1 when the tool answered ``isError``, the server refused the call (a
tool missing from this caller's list: the message says why) or the connection; 2 for bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

# `make demo PORT=8001` serves on another port: follow it when PORT is set in the environment.
DEMO_URL = f"http://127.0.0.1:{os.environ.get('PORT') or 8000}/t/acme/mcp"


async def list_tools(client: Client) -> list:
    """Every tool the caller may use, following ``tools/list`` pages."""
    tools, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            return tools


async def run(url: str, token: str, tool: str | None, arguments: dict) -> int:
    """Connect as ``token``, print the tools, call ``tool`` (if given) and print its result."""
    headers = {"Authorization": f"Bearer {token}"}
    # A tool may take its route's time limit (up to 30 s), a confirmation the person's time to answer.
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = await list_tools(client)
            print(f"{len(tools)} tool{'s' * (len(tools) != 1)} at {url}:")
            for each in tools:
                print(f"  {each.name}: {each.title or (each.description or '').splitlines()[0]}")
            if tool is None:
                return 0
            try:
                result = await client.call_tool(tool, arguments)
            except MCPError as refused:
                # The server refused the call itself (not the connection): most often a tool this
                # caller may not use, which the server names with the reasons (-32602).
                print(f"error: {tool} was refused: {refused.message}", file=sys.stderr)
                return 1
    print(f"\n{tool} {json.dumps(arguments)} ->")
    if result.structured_content is not None:
        print(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    else:
        print("\n".join(block.text for block in result.content if block.type == "text"))
    return 1 if result.is_error else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("MCP_URL", DEMO_URL), help=f"default: {DEMO_URL}")
    parser.add_argument("--token", default=os.environ.get("MCP_TOKEN"), help="a bearer token, lcp_...")
    parser.add_argument("--call", metavar="TOOL", help="a tool's wire name, e.g. acme_case_portal_find_case")
    parser.add_argument("--arguments", default="{}", help="the tool's arguments as a JSON object")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("give --token (or set MCP_TOKEN): `make demo` prints one for each demo user")
    try:
        arguments = json.loads(args.arguments)
    except ValueError as err:
        parser.error(f"--arguments is not JSON: {err}")
    if not isinstance(arguments, dict):
        parser.error('--arguments must be a JSON object, e.g. \'{"query": "ada"}\'')
    try:
        return asyncio.run(run(args.url, args.token, args.call, arguments))
    except* httpx2.TransportError:
        print(f"error: cannot reach {args.url}: is the platform running (make demo)?", file=sys.stderr)
    except* MCPError as refused:
        # The SDK reports an HTTP refusal (a bad token is a 401) as a JSON-RPC error without the status.
        reason = _first(refused)
        print(f"error: {args.url} refused: {reason}; check the token and the URL", file=sys.stderr)
    return 1


def _first(group: BaseExceptionGroup) -> BaseException:
    """The first exception inside nested task-group exception groups."""
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    return group


if __name__ == "__main__":
    sys.exit(main())
