"""What wraps each MCP message on the server: the SDK's OpenTelemetry span only when asked for."""

from __future__ import annotations

from mcp.server._otel import OpenTelemetryMiddleware

from mcp_gateway.protocol.list_pages import ListPages
from mcp_gateway.protocol.notifications import Notifier
from mcp_gateway.protocol.server import build_server


def kinds(settings, spans: bool) -> list[type]:
    settings.MCP_OPENTELEMETRY = spans
    return [type(middleware) for middleware in build_server(Notifier()).middleware]


def test_the_sdks_opentelemetry_span_is_left_out_by_default(settings):
    found = kinds(settings, spans=False)

    assert OpenTelemetryMiddleware not in found
    assert ListPages in found


def test_the_setting_keeps_the_sdks_opentelemetry_span_outermost(settings):
    assert kinds(settings, spans=True)[0] is OpenTelemetryMiddleware
