"""Explicit content through the official MCP client: images and links arrive, hostile content is refused."""

from __future__ import annotations

import base64

import anyio
import httpx2
import mcp.types as types
import pytest

from mcp_gateway.models import ToolCallAudit
from tests.mcp_gateway.conftest import mcp_client
from tests.support.apps import HANDLERS, _tool, cases_manifest_plus

PNG = b"\x89PNG\r\n\x1a\n" + bytes(32)
CHART = """
from platform_sdk import image, resource_link, text

def handle(request):
    png = b"\\x89PNG\\r\\n\\x1a\\n" + bytes(32)
    return {"content": [
        text("Open cases by week."),
        image(png, "image/png"),
        resource_link("/ping", "Ping", description="The app's health check"),
    ]}
"""
HOSTILE = """
import base64

def handle(request):
    svg = base64.b64encode(b"<svg onload='alert(1)'/>").decode()
    return {"content": [{"type": "image", "data": svg, "mimeType": "image/svg+xml"}]}
"""


@pytest.fixture
def app(mcp_url, acme, deploy):
    manifest = cases_manifest_plus(
        {
            "GET /chart": {"handler": "server/chart.py", "auth": "user"},
            "GET /hostile": {"handler": "server/hostile.py", "auth": "user"},
        },
        [_tool("chart", "GET /chart"), _tool("hostile", "GET /hostile")],
    )
    deploy(acme, manifest, {**HANDLERS, "server/chart.py": CHART, "server/hostile.py": HOSTILE})
    return acme


def call(url: str, raw: str, name: str, mode: str = "legacy"):
    async def main():
        async with mcp_client(url, raw, mode=mode) as client:
            return await client.call_tool(name, {})

    return anyio.run(main)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_an_image_and_a_link_to_the_apps_own_route_arrive(app, live_url, mcp_url, make_token, mode, settings):
    settings.DEBUG = True  # the request's own origin is the public one only in DEBUG (core.origin)
    raw = make_token(app, "member")[1]
    result = call(mcp_url(), raw, "acme_cases_chart", mode)
    assert result.is_error is False
    text, image, link = result.content
    assert isinstance(text, types.TextContent) and text.text == "Open cases by week."
    assert isinstance(image, types.ImageContent)
    assert (image.mime_type, base64.b64decode(image.data)) == ("image/png", PNG)
    assert isinstance(link, types.ResourceLink)
    assert (link.uri, link.name, link.description) == (
        f"{live_url}/t/acme/apps/cases/ping",
        "Ping",
        "The app's health check",
    )
    # The link is the app's front-end path: it answers.
    assert httpx2.get(link.uri).json()["pong"] is True


def test_the_front_end_path_gets_the_content_as_the_handler_built_it(app, live_url, make_token):
    raw = make_token(app, "member")[1]
    body = httpx2.get(
        f"{live_url}/t/acme/apps/cases/chart", headers={"Authorization": f"Bearer {raw}"}
    ).json()
    assert [item["type"] for item in body["content"]] == ["text", "image", "resource_link"]
    assert body["content"][2]["route"] == "/ping"


def test_hostile_content_is_refused_with_a_clear_error(app, mcp_url, make_token):
    result = call(mcp_url(), make_token(app, "member")[1], "acme_cases_hostile")
    assert result.is_error is True
    assert result.content[0].text == (
        "The tool returned content the platform refuses: content[0]: mimeType 'image/svg+xml' is not "
        "allowed: use image/png, image/jpeg, image/gif, image/webp."
    )
    assert ToolCallAudit.objects.for_tenant(app).get().outcome == "tool_error"
