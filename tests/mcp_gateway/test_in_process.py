"""The in-process connection (``mcp_gateway.transport.in_process``) that protocol tests use: it
authenticates as the HTTP endpoint does, serves each caller its own view, and its caller never
reaches a request that has no scope of its own."""

from __future__ import annotations

from types import SimpleNamespace

import anyio
import pytest

from mcp_gateway.exceptions import GatewayRefused
from mcp_gateway.protocol.context import GatewayRequest, authenticated, served, serving
from mcp_gateway.transport.auth import TOKEN_INVALID
from mcp_gateway.transport.in_process import connect

pytestmark = pytest.mark.django_db(transaction=True)


def tool_names(slug: str, bearer: str, mode: str = "legacy") -> list[str]:
    async def main():
        async with connect(slug, bearer, mode=mode) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    return anyio.run(main)


def refusal(slug: str, bearer: str) -> GatewayRefused:
    with pytest.raises(GatewayRefused) as caught:
        tool_names(slug, bearer)
    return caught.value


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_each_caller_is_served_its_own_tenant_in_both_eras(acme, make_tenant, make_member, make_token, mode):
    other = make_tenant("globex")
    make_member(other, "eve")
    acme_tools = tool_names("acme", make_token(acme, "member")[1], mode)
    globex_tools = tool_names("globex", make_token(other, "eve")[1], mode)
    assert "acme_records_query" in acme_tools and "globex_records_query" in globex_tools
    assert all(name.startswith("acme_") for name in acme_tools)
    assert all(name.startswith("globex_") for name in globex_tools)


def test_bad_and_foreign_tokens_are_refused_as_over_http(acme, make_tenant, make_member, make_token):
    other = make_tenant("globex")
    make_member(other, "eve")
    for bearer in ("lcp_not-a-token", make_token(other, "eve")[1]):
        refused = refusal("acme", bearer)
        assert (refused.status, refused.message) == (401, TOKEN_INVALID)  # the endpoint's 401 description
    assert refusal("nowhere", make_token(acme, "member")[1]).status == 404


def test_a_request_without_a_scope_has_no_caller_outside_a_connection():
    # What an HTTP request's handler would see if the SDK ever passed no request: nobody (-32600).
    assert served.get() is None
    assert authenticated(SimpleNamespace(request=None)) is None
    # An HTTP request being served is not a connection: its caller never reaches a request without
    # a scope; an in-process connection's does.
    http = GatewayRequest(tenant=SimpleNamespace(pk=1), caller=SimpleNamespace())
    with serving(http):
        assert authenticated(SimpleNamespace(request=None)) is None
    connection = GatewayRequest(tenant=SimpleNamespace(pk=1), caller=SimpleNamespace(), connection=True)
    with serving(connection):
        assert authenticated(SimpleNamespace(request=None)) is connection
