"""Who the builder endpoint lets in: tenant admins by API token or OAuth connection, nobody else."""

from __future__ import annotations

import pytest
from django.test import Client

from builder.auth import NOT_ADMIN, admin_request
from builder.exceptions import BuilderRefused
from tests.oauth.fixtures import fast_password_hashing, public_origin  # noqa: F401
from tests.oauth.flow import ORIGIN, connect


def refusal(slug: str, authorization: str | None, origin: str | None = ORIGIN) -> tuple[int, str]:
    with pytest.raises(BuilderRefused) as refused:
        admin_request(slug, authorization, origin)
    return refused.value.status, refused.value.message


def test_an_admins_oauth_connection_gets_in_as_that_admin(acme):
    connected = connect(Client(), "admin")
    found = admin_request("acme", f"Bearer {connected.access_token}", ORIGIN)
    assert found.tenant.slug == "acme" and found.user.username == "admin"


def test_an_oauth_token_needs_an_origin_its_audience_can_be_checked_against(acme):
    connected = connect(Client(), "admin")
    assert refusal("acme", f"Bearer {connected.access_token}", origin=None)[0] == 401


@pytest.mark.parametrize(("username", "read_only"), [("reader", False), ("admin", True)])
def test_members_and_read_only_connections_are_refused(acme, username, read_only):
    connected = connect(Client(), username, read_only=read_only)
    assert refusal("acme", f"Bearer {connected.access_token}") == (403, NOT_ADMIN)


def test_tokens_are_checked_as_the_mcp_endpoint_checks_them(acme, make_tenant, make_token):
    _, admin = make_token(acme, "admin")
    assert admin_request("acme", f"Bearer {admin}", ORIGIN).user.username == "admin"
    assert refusal("acme", None)[0] == 401
    assert refusal("acme", "Basic abc")[0] == 401
    assert refusal("acme", "Bearer lcp_nope_nope")[0] == 401
    assert refusal("nowhere", f"Bearer {admin}")[0] == 404
    make_tenant("other")
    assert refusal("other", f"Bearer {admin}")[0] == 401  # a token is good in its own tenant only
