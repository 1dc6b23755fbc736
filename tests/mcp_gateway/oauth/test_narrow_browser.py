"""In Debian's chromium (Playwright): the consent page's app choices, and the console's pending
approvals decided with a click."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.mcp_gateway.oauth.test_browser import (  # noqa: F401  (fixtures)
    REDIRECT_URI,
    _authorization_url,
    _sign_in,
    admin_token,
    chromium,
    platform,
    shots,
)
from tests.mcp_gateway.test_confirmation import FILES as LEDGER_FILES
from tests.mcp_gateway.test_confirmation import MANIFEST as LEDGER
from tests.mcp_gateway.test_confirmation import WIPE
from tests.support import mcp_wire as wire

pytestmark = pytest.mark.slow  # a browser process
# Collected (and skipped) on a machine without the dev extra's browser driver.
pytest.importorskip("playwright.sync_api")


@pytest.fixture
def two_apps(platform, acme, deploy):  # noqa: F811
    deploy(acme, LEDGER, LEDGER_FILES)
    return platform


def test_the_consent_page_offers_each_app_and_the_choice_narrows_the_connection(
    two_apps,
    admin_token,  # noqa: F811
    chromium,  # noqa: F811
):
    url, client_id, verifier = _authorization_url(two_apps)
    page = chromium.new_page(viewport={"width": 900, "height": 1100})
    returned: list[str] = []
    page.route(
        f"{REDIRECT_URI}*", lambda route: (returned.append(route.request.url), route.fulfill(body="ok"))
    )

    page.goto(url)
    _sign_in(page, "writer")
    assert page.get_by_role("group", name="Apps this connection carries").is_visible()
    page.locator("#app-cases").get_by_role("radio", name="not this app").check()
    page.locator("#app-ledger").get_by_role("radio", name="read-only").check()
    page.get_by_role("button", name="Allow").click()
    page.wait_for_url(f"{REDIRECT_URI}*")

    code = parse_qs(urlsplit(returned[-1]).query)["code"][0]
    tokens = httpx2.post(
        f"{two_apps}/oauth/token/",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": f"{two_apps}/t/acme/mcp",
        },
    )
    assert tokens.status_code == 200 and "app:ledger:read" in tokens.json()["scope"].split()
    connections = httpx2.get(
        f"{two_apps}/api/tenants/acme/connections", headers={"Authorization": f"Bearer {admin_token}"}
    ).json()
    assert [row["apps"] for row in connections] == [["app:ledger:read"]]


@pytest.fixture
def writer_token(two_apps, acme, make_token) -> str:
    return make_token(acme, "writer")[1]  # before the browser: its loop runs in this thread


def _wipe(base: str, token: str) -> dict:
    """A plain JSON-RPC POST of the confirm tool (a client without elicitation): its result."""
    message = wire.request("tools/call", {"name": WIPE, "arguments": {"account": "acct-1"}})
    headers = {**wire.modern_headers(token, message), "Accept": "application/json"}
    return httpx2.post(
        f"{base}/t/acme/mcp", content=wire.encode(message), headers=headers, timeout=30
    ).json()["result"]


def test_pending_approvals_are_decided_in_the_console(
    two_apps,
    writer_token,
    chromium,  # noqa: F811
):
    approval = _wipe(two_apps, writer_token)["structuredContent"]["approval"]
    page = chromium.new_page(viewport={"width": 900, "height": 900})
    page.goto(f"{two_apps}/accounts/login/?next=/console/acme/approvals/")
    _sign_in(page, "writer")

    assert page.get_by_role("heading", name="Pending approvals").is_visible()
    page.get_by_role("link", name=approval["id"]).click()
    assert page.get_by_text('"account": "acct-1"').is_visible()
    page.get_by_role("button", name="Approve").click()
    assert page.get_by_text("Approved: the same call").is_visible()

    ran = _wipe(two_apps, writer_token)
    assert ran["isError"] is False and ran["structuredContent"] == {"wiped": "acct-1"}
