"""Queries per request on the hot paths, warm (caller cached, catalog built, app loaded): a rise fails here.

The MCP pins run the gateway's synchronous core as one HTTP request does: ``verify_bearer``, then
the handler's work. The front-end pin goes through Django's whole request cycle.
"""

from __future__ import annotations

import pytest

from mcp_gateway.tools.call import calls as tool_calls
from mcp_gateway.transport.auth import verify_bearer

# the tenant with its token and the token's user (one prepared lookup); the membership is cached.
AUTH = 1
AUDIT = 1


@pytest.fixture
def reader(acme, deploy, make_token):
    deploy(acme)
    return make_token(acme, "reader")[1]


def mcp_request(raw: str, work):
    gw, _audience = verify_bearer("acme", raw)
    return work(gw)


def warm_then_count(django_assert_num_queries, expected: int, raw: str, work):
    mcp_request(raw, work)  # the first request notes last_used_at and fills the caches
    with django_assert_num_queries(expected):
        return mcp_request(raw, work)


@pytest.mark.django_db
def test_a_call_of_an_app_tool_makes_auth_and_audit_queries_only(reader, django_assert_num_queries):
    result = warm_then_count(
        django_assert_num_queries,
        AUTH + AUDIT,
        reader,
        lambda gw: tool_calls.call_tool(gw.tenant, gw.caller, "acme_cases_listing", {}),
    )
    assert result.is_error is False


@pytest.mark.django_db
def test_a_call_of_a_built_in_records_tool_adds_its_one_read(reader, django_assert_num_queries):
    arguments = {"app": "cases", "collection": "cases", "where": {"client_name": "x"}}
    result = warm_then_count(
        django_assert_num_queries,
        AUTH + 1 + AUDIT,
        reader,
        lambda gw: tool_calls.call_tool(gw.tenant, gw.caller, "acme_records_query", arguments),
    )
    assert result.is_error is False


@pytest.mark.django_db
def test_a_tools_list_page_makes_the_auth_queries_only(reader, django_assert_num_queries):
    page = warm_then_count(
        django_assert_num_queries, AUTH, reader, lambda gw: tool_calls.list_tools(gw.tenant, gw.caller, None)
    )
    assert "acme_cases_find_case" in [tool.name for tool in page.tools]


@pytest.mark.django_db
def test_the_front_end_route_makes_tenant_and_token_queries_only(reader, client, django_assert_num_queries):
    url = "/t/acme/apps/cases/listing"
    headers = {"HTTP_AUTHORIZATION": f"Bearer {reader}"}
    client.get(url, **headers)

    with django_assert_num_queries(2):
        response = client.get(url, **headers)

    assert response.status_code == 200 and response.json() == [1, 2, 3]
