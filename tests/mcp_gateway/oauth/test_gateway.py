"""OAuth access tokens at the MCP endpoint: bound to one tenant's URL, acting as their user now."""

from __future__ import annotations

from datetime import timedelta

import anyio
import httpx2
import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken

from mcp_gateway.models import ToolCallAudit
from tenants import actions
from tests.mcp_gateway.conftest import all_tool_names, mcp_client
from tests.oauth.flow import connect
from tests.support.mcp_wire import legacy_initialize


@pytest.fixture
def live(mcp_url, acme, deploy, settings):
    deploy(acme)
    settings.PUBLIC_BASE_URL = mcp_url().split("/t/")[0]
    return settings.PUBLIC_BASE_URL


def tools_list(url: str, token: str) -> httpx2.Response:
    return httpx2.post(
        url,
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        json=legacy_initialize(),
    )


def names(url: str, token: str) -> list[str]:
    async def main():
        async with mcp_client(url, token) as client:
            return await all_tool_names(client)

    return anyio.run(main)


def test_protected_resource_metadata_lists_the_platform_as_authorization_server(mcp_url, live):
    body = httpx2.get(mcp_url().replace("/t/", "/.well-known/oauth-protected-resource/t/")).json()
    assert body["authorization_servers"] == [live]
    assert body["resource"] == f"{live}/t/acme/mcp"
    assert httpx2.get(f"{live}/.well-known/oauth-authorization-server").json()["issuer"] == live


def test_an_access_token_works_at_its_tenant_and_is_refused_at_another(
    mcp_url, live, make_tenant, make_member
):
    other = make_tenant("other")
    make_member(other, "reader")  # the same person is a member there too: the token still is not
    token = connect(Client(), "reader").access_token
    assert tools_list(mcp_url("acme"), token).status_code == 200
    refused = tools_list(mcp_url("other"), token)
    assert refused.status_code == 401
    assert "resource_metadata=" in refused.headers["www-authenticate"]


def test_an_access_token_is_refused_by_the_api_and_the_front_end_routes(mcp_url, live):
    token = connect(Client(), "reader").access_token
    headers = {"Authorization": f"Bearer {token}"}
    assert httpx2.get(f"{live}/api/tenants/acme/connections", headers=headers).status_code == 401
    assert httpx2.get(f"{live}/api/tenants/acme/members", headers=headers).status_code == 401
    front = httpx2.get(f"{live}/t/acme/apps/cases/echo/x", headers=headers)
    assert front.status_code in (401, 403)


def test_an_expired_access_token_is_refused(mcp_url, live):
    token = connect(Client(), "reader").access_token
    AccessToken.objects.filter(user__username="reader").update(expires=timezone.now() - timedelta(seconds=1))
    assert tools_list(mcp_url(), token).status_code == 401


def test_a_connection_acts_with_the_users_roles_at_call_time(mcp_url, live, acme):
    token = connect(Client(), "reader").access_token
    before = names(mcp_url(), token)
    actions.update_member(acme, "reader", roles=["case_writer"], acting_user=None)
    after = names(mcp_url(), token)
    assert "acme_cases_create_case" not in before and "acme_cases_create_case" in after
    actions.remove_member(acme, "reader", acting_user=None)
    assert tools_list(mcp_url(), token).status_code == 401


def test_a_read_only_connection_sees_only_read_only_tools_like_a_read_only_token(
    mcp_url, live, acme, make_token
):
    oauth = names(mcp_url(), connect(Client(), "writer", read_only=True).access_token)
    static = names(mcp_url(), make_token(acme, "writer", read_only=True)[1])
    assert oauth == static


def test_static_tokens_keep_working_beside_oauth(mcp_url, live, acme, make_token):
    connect(Client(), "reader")
    assert tools_list(mcp_url(), make_token(acme, "reader")[1]).status_code == 200


def test_audit_rows_carry_the_oauth_client_id(mcp_url, live):
    connected = connect(Client(), "writer")

    async def main():
        async with mcp_client(mcp_url(), connected.access_token) as client:
            await client.call_tool("acme_cases_echo", {"thing": "x"})

    anyio.run(main)
    row = ToolCallAudit.all_tenants.get(wire_name="acme_cases_echo")
    assert row.oauth_client_id == connected.client_id
    assert row.user.username == "writer"
    assert ToolCallAudit.all_tenants.filter(oauth_client_id="").count() == 0


def test_audit_rows_of_static_tokens_name_no_oauth_client(mcp_url, live, acme, make_token):
    token = make_token(acme, "writer")[1]

    async def main():
        async with mcp_client(mcp_url(), token) as client:
            await client.call_tool("acme_cases_echo", {"thing": "x"})

    anyio.run(main)
    assert ToolCallAudit.all_tenants.get(wire_name="acme_cases_echo").oauth_client_id == ""
