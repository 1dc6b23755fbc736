"""One public-origin rule (``core.origin.public_origin``) for the OAuth metadata, the MCP endpoint's
protected-resource metadata and 401, and the links in tool results: for the same request they name
the same origin, or, outside DEBUG without PUBLIC_BASE_URL, none of them names one."""

from __future__ import annotations

import httpx2
import mcp.types as types
import pytest

from tests.mcp_gateway.test_rich_content_e2e import app, call  # noqa: F401  (the app fixture)

CONFIGURED = "https://platform.example"


def answers(live_url: str, mcp_url: str, raw: str) -> dict:
    """What each surface says the origin is, for requests to ``live_url`` (None: it names none)."""
    as_meta = httpx2.get(f"{live_url}/.well-known/oauth-authorization-server")
    prm = httpx2.get(mcp_url.replace("/t/", "/.well-known/oauth-protected-resource/t/"))
    challenge = httpx2.post(mcp_url, json={}).headers["www-authenticate"]
    result = call(mcp_url, raw, "acme_cases_chart")
    link = next((b for b in result.content if isinstance(b, types.ResourceLink)), None)
    return {
        "issuer": as_meta.json()["issuer"] if as_meta.status_code == 200 else None,
        "prm issuer": prm.json()["authorization_servers"][0] if prm.status_code == 200 else None,
        "resource": prm.json()["resource"].removesuffix("/t/acme/mcp") if prm.status_code == 200 else None,
        "401": challenge.split('resource_metadata="')[1].split("/.well-known")[0]
        if "resource_metadata" in challenge
        else None,
        "link": str(link.uri).removesuffix("/t/acme/apps/cases/ping") if link is not None else None,
    }


@pytest.mark.parametrize(
    ("debug", "configured", "expected"),
    [
        (True, "", "live"),  # DEBUG: the request's own origin
        (True, CONFIGURED, CONFIGURED),  # PUBLIC_BASE_URL wins over the Host
        (False, CONFIGURED, CONFIGURED),
        (False, "", None),  # production without PUBLIC_BASE_URL: no origin anywhere
    ],
)
@pytest.mark.usefixtures("app")
def test_every_surface_names_the_same_origin(
    acme, live_url, mcp_url, make_token, settings, debug, configured, expected
):
    settings.DEBUG, settings.PUBLIC_BASE_URL = debug, configured
    found = answers(live_url, mcp_url(), make_token(acme, "member")[1])
    origin = live_url if expected == "live" else expected
    assert found == dict.fromkeys(found, origin)


@pytest.mark.usefixtures("app")
def test_without_an_origin_tokens_still_work_and_a_link_is_an_error_saying_why(
    acme, mcp_url, make_token, settings
):
    settings.DEBUG, settings.PUBLIC_BASE_URL = False, ""
    result = call(mcp_url(), make_token(acme, "member")[1], "acme_cases_chart")
    assert result.is_error is True
    assert "PUBLIC_BASE_URL" in result.content[0].text
    prm = httpx2.get(mcp_url().replace("/t/", "/.well-known/oauth-protected-resource/t/"))
    assert prm.status_code == 503
