"""Callers cached by a serving process stop counting on the first request after the database changes.

The server runs in a process of its own, and every change is made by another process (a management
command or a shell), as an operator or another replica would make it. Before each change the
caller has made requests, so the serving process holds it in its cache.
"""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from tests.mcp_gateway.conftest import all_tool_names, mcp_client
from tests.support import mcp_wire as wire
from tests.support.platform_process import PlatformProcess, migrated_database

pytestmark = pytest.mark.slow

READ_TOOL = "acme_cases_find_case"  # role:case_reader,case_writer
WARM_UP = 3


# Who each test changes, made up front in one shell: username -> add_member and issue_token options.
PEOPLE = {
    "fresh_revoked": {"roles": ["case_reader"]},
    "fresh_front": {"roles": ["case_reader"]},
    "fresh_expiring": {"roles": ["case_reader"], "expires_days": 1},
    "fresh_inactive": {"roles": ["case_reader"]},
    "fresh_removed": {"roles": ["case_reader"]},
    "fresh_role": {"roles": ["case_reader"]},
    "fresh_super": {"superuser": True},
    "fresh_settings": {"roles": ["case_reader"]},
}
MAKE_PEOPLE = """
import json
from tenants import actions
from tenants.models import Tenant
tenant = Tenant.objects.get(slug="acme")
tokens = {}
for username, options in %r.items():
    days = options.pop("expires_days", None)
    actions.add_member(tenant, username, acting_user=None, **options)
    tokens[username] = actions.issue_token(tenant, username, expires_days=days, acting_user=None)[1]
print(json.dumps(tokens))
"""


@pytest.fixture(scope="module")
def platform_and_tokens(tmp_path_factory) -> tuple[PlatformProcess, dict[str, str]]:
    """The serving process, and a token per person of ``PEOPLE``."""
    workdir = tmp_path_factory.mktemp("caller-freshness")
    database = migrated_database(workdir)
    platform = PlatformProcess(workdir, database.url)
    try:
        platform.seed()
        tokens = platform.python(MAKE_PEOPLE % PEOPLE)
        platform.start()
        yield platform, tokens
    finally:
        platform.stop()
        database.drop()


@pytest.fixture
def served(platform_and_tokens) -> PlatformProcess:
    return platform_and_tokens[0]


@pytest.fixture
def tokens(platform_and_tokens) -> dict[str, str]:
    return platform_and_tokens[1]


def mcp_url(platform: PlatformProcess) -> str:
    return f"{platform.base_url}/t/acme/mcp"


def in_shell(platform: PlatformProcess, code: str) -> None:
    platform.python(f"from tenants import actions; from tenants.models import Tenant; {code}; print('null')")


def warm(platform: PlatformProcess, token: str) -> list[str]:
    """A few requests, so the serving process has the caller cached; the tools it sees."""
    for _ in range(WARM_UP):
        names = wire.tool_names(mcp_url(platform), token)
    return names


def status_of_list(platform: PlatformProcess, token: str) -> int:
    message = wire.request("tools/list")
    return wire.post(mcp_url(platform), wire.encode(message), wire.modern_headers(token, message)).status_code


def test_a_revoked_token_is_refused_on_the_next_request(served, tokens):
    token = tokens["fresh_revoked"]
    assert READ_TOOL in warm(served, token)

    in_shell(
        served,
        "from tenants.models import ApiToken; "
        "[actions.revoke_token(t, acting_user=None) "
        "for t in ApiToken.all_tenants.filter(user__username='fresh_revoked')]",
    )

    assert status_of_list(served, token) == 401


def test_a_revoked_token_is_refused_on_the_front_end_path_too(served, tokens):
    token = tokens["fresh_front"]
    url = f"{served.base_url}/t/acme/apps/cases/cases/search?query=x"
    headers = {"Authorization": f"Bearer {token}"}
    for _ in range(WARM_UP):
        assert httpx2.get(url, headers=headers, timeout=30).status_code == 200

    in_shell(
        served,
        "from tenants.models import ApiToken; "
        "[actions.revoke_token(t, acting_user=None) "
        "for t in ApiToken.all_tenants.filter(user__username='fresh_front')]",
    )

    assert httpx2.get(url, headers=headers, timeout=30).status_code == 401


def test_an_expired_token_is_refused_on_the_next_request(served, tokens):
    token = tokens["fresh_expiring"]
    warm(served, token)

    # Time passing, as a direct write: nothing but the token row changes.
    in_shell(
        served,
        "from datetime import timedelta; from django.utils import timezone; "
        "from tenants.models import ApiToken; "
        "ApiToken.all_tenants.filter(user__username='fresh_expiring')"
        ".update(expires_at=timezone.now() - timedelta(seconds=1))",
    )

    assert status_of_list(served, token) == 401


def test_a_deactivated_user_is_refused_on_the_next_request(served, tokens):
    token = tokens["fresh_inactive"]
    warm(served, token)

    in_shell(
        served,
        "from django.contrib.auth import get_user_model; "
        "get_user_model().objects.filter(username='fresh_inactive').update(is_active=False)",
    )

    assert status_of_list(served, token) == 401


def test_a_removed_member_is_refused_on_the_next_request(served, tokens):
    token = tokens["fresh_removed"]
    warm(served, token)

    in_shell(
        served, "actions.remove_member(Tenant.objects.get(slug='acme'), 'fresh_removed', acting_user=None)"
    )

    assert status_of_list(served, token) == 401


def test_a_removed_role_hides_and_refuses_its_tools_on_the_next_request_of_an_open_session(served, tokens):
    token = tokens["fresh_role"]
    warm(served, token)

    async def main():
        async with mcp_client(mcp_url(served), token) as client:
            before = await all_tool_names(client)
            await anyio.to_thread.run_sync(
                served.manage, "add_member", "acme", "fresh_role", "--roles", "other_role"
            )
            after = await all_tool_names(client)
            try:
                await client.call_tool(READ_TOOL, {"query": "ab"})
            except MCPError as err:  # caught inside: the client's task group would wrap it
                return before, after, err.error.code
            return before, after, None

    before, after, refused = anyio.run(main)

    assert READ_TOOL in before
    assert READ_TOOL not in after
    assert refused == INVALID_PARAMS


def test_a_withdrawn_superuser_flag_counts_on_the_next_request(served, tokens):
    token = tokens["fresh_super"]
    assert READ_TOOL in warm(served, token)

    in_shell(
        served,
        "from django.contrib.auth import get_user_model; "
        "get_user_model().objects.filter(username='fresh_super').update(is_superuser=False)",
    )

    assert READ_TOOL not in wire.tool_names(mcp_url(served), token)


def test_switched_off_settings_count_on_the_next_request(served, tokens):
    token = tokens["fresh_settings"]
    assert READ_TOOL in warm(served, token)

    served.manage("tenant_setting", "acme", "customAppsMcpTools", "false")
    try:
        names = wire.tool_names(mcp_url(served), token)
        called = wire.messages_in(wire.call_tool(mcp_url(served), token, READ_TOOL, {"query": "ab"}))[0]
        served.manage("tenant_setting", "acme", "mcpServer", "false")
        endpoint_off = status_of_list(served, token)
    finally:
        in_shell(
            served,
            "t = Tenant.objects.get(slug='acme'); "
            "[actions.set_tenant_setting(t, key, True, acting_user=None) "
            "for key in ('customAppsMcpTools', 'mcpServer')]",
        )

    assert READ_TOOL not in names and "acme_records_query" in names
    assert called["error"]["code"] == INVALID_PARAMS
    assert endpoint_off == 404
