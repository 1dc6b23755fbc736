"""Copy-ready client configurations for one tenant's MCP endpoint."""

from __future__ import annotations

import json
from dataclasses import dataclass

# Snippets read the token from this environment variable, so nobody pastes a secret into a file.
TOKEN_VARIABLE = "LCP_TOKEN"
INSPECTOR = "@modelcontextprotocol/inspector"


@dataclass(frozen=True)
class Snippet:
    slug: str  # the HTML id of its block
    title: str
    how: str
    text: str


def _claude_code(name: str, url: str) -> str:
    return (
        f"claude mcp add --transport http {name} {url} \\\n"
        f'  --header "Authorization: Bearer ${TOKEN_VARIABLE}"'
    )


def _mcp_json(name: str, url: str) -> str:
    config = {
        "mcpServers": {
            name: {"type": "http", "url": url, "headers": {"Authorization": f"Bearer ${{{TOKEN_VARIABLE}}}"}}
        }
    }
    return json.dumps(config, indent=2)


def _inspector(url: str) -> str:
    return (
        f"npx -y {INSPECTOR} --cli {url} --transport http \\\n"
        f'  --header "Authorization: Bearer ${TOKEN_VARIABLE}" --method tools/list'
    )


def _python_sdk(url: str) -> str:
    return f'''import asyncio
import os

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = "{url}"


async def main() -> None:
    headers = {{"Authorization": f"Bearer {{os.environ['{TOKEN_VARIABLE}']}}"}}
    # httpx waits 5 s for an answer by default; a tool may take its route's time limit (up to 30 s),
    # and a confirmation waits for the person to answer.
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        async with Client(streamable_http_client(URL, http_client=http)) as client:
            listing = await client.list_tools()
            for tool in listing.tools:
                print(tool.name)


asyncio.run(main())
'''


def _claude_code_oauth(name: str, url: str) -> str:
    then = f"# then, in Claude Code: /mcp, pick {name}, Authenticate"
    return f"claude mcp add --transport http {name} {url}\n{then}"


def snippets(name: str, url: str) -> list[Snippet]:
    """The snippets for the endpoint at ``url``, registered under ``name`` where a client asks for one."""
    return [
        Snippet(
            "claude-code-oauth",
            "Claude Code, signing in (OAuth)",
            "No token needed: Claude Code opens this platform's sign-in and consent page, and the "
            "connection then appears under Connections.",
            _claude_code_oauth(name, url),
        ),
        Snippet("claude-code", "Claude Code, with a token", "Run in a terminal:", _claude_code(name, url)),
        Snippet(
            "mcp-json",
            ".mcp.json",
            "Put in .mcp.json at the root of a project (Claude Code and other clients read it):",
            _mcp_json(name, url),
        ),
        Snippet(
            "inspector", "MCP Inspector (CLI)", "List the tools from a terminal (Node 22):", _inspector(url)
        ),
        Snippet(
            "python-sdk",
            "Python SDK",
            "With the official SDK (pip install 'mcp>=2.3,<2.4'), list the tools:",
            _python_sdk(url),
        ),
    ]
