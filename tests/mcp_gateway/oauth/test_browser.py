"""The sign-in and consent pages in a real browser: Debian's chromium, driven by Playwright.

Never a downloaded browser build: Playwright launches ``/usr/bin/chromium`` (installed by
``.ci/install-system-deps``). Controls are found by their accessible names (labels, button text),
as assistive technology finds them. Set UPDATE_SCREENSHOTS=1 to refresh docs/oauth/*.png.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest
from django.core.management import call_command

from tests.oauth.flow import REDIRECT_URI, pkce_pair
from tests.oauth.live import PASSWORD

# Collected (and skipped) on a machine without the dev extra's browser driver.
sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright

CHROMIUM = "/usr/bin/chromium"
DOCS = Path(__file__).resolve().parents[3] / "docs" / "oauth"


@pytest.fixture
def shots(tmp_path) -> Path:
    return DOCS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path


@pytest.fixture
def chromium():
    assert Path(CHROMIUM).exists(), "install Debian's chromium: bash .ci/install-system-deps"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def platform(mcp_url, acme, deploy, settings):
    from io import StringIO

    deploy(acme)
    settings.PUBLIC_BASE_URL = mcp_url().split("/t/")[0]
    for username in ("writer", "outsider"):
        if username == "outsider":
            from tenants import actions

            actions.add_member(
                actions.create_tenant("elsewhere", acting_user=None), "outsider", acting_user=None
            )
        call_command("set_password", username, stdin=StringIO(PASSWORD + "\n"), stdout=StringIO())
    return settings.PUBLIC_BASE_URL


def _authorization_url(base: str) -> tuple[str, str, str]:
    client_id = httpx2.post(
        f"{base}/oauth/register/",
        json={"client_name": "Claude", "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
    ).json()["client_id"]
    verifier, challenge = pkce_pair()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "state": "browser",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": f"{base}/t/acme/mcp",
        "scope": "mcp",
    }
    return f"{base}/oauth/authorize/?{urlencode(query)}", client_id, verifier


def _sign_in(page, username: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


@pytest.fixture
def admin_token(acme, make_token) -> str:
    return make_token(acme, "admin")[1]


def test_a_person_signs_in_and_allows_a_read_only_connection_in_chromium(
    platform, admin_token, chromium, shots
):
    url, client_id, verifier = _authorization_url(platform)
    page = chromium.new_page(viewport={"width": 900, "height": 1000})
    returned: list[str] = []
    page.route(
        f"{REDIRECT_URI}*", lambda route: (returned.append(route.request.url), route.fulfill(body="ok"))
    )

    page.goto(url)
    assert page.get_by_role("heading", name="Sign in").is_visible()
    page.screenshot(path=str(shots / "sign-in.png"), full_page=True)
    _sign_in(page, "writer")

    assert page.get_by_role("heading", name="Allow Claude to use acme as you?").is_visible()
    assert page.get_by_text("registered dynamically").is_visible()
    page.screenshot(path=str(shots / "consent.png"), full_page=True)
    page.get_by_role("checkbox", name="Read-only").check()
    page.get_by_role("button", name="Allow").click()
    page.wait_for_url(f"{REDIRECT_URI}*")

    params = parse_qs(urlsplit(returned[-1]).query)
    assert params["state"] == ["browser"]
    tokens = httpx2.post(
        f"{platform}/oauth/token/",
        data={
            "grant_type": "authorization_code",
            "code": params["code"][0],
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": f"{platform}/t/acme/mcp",
        },
    )
    assert tokens.status_code == 200
    # Checked through the API: Playwright's loop runs in this thread, where the ORM may not.
    connections = httpx2.get(
        f"{platform}/api/tenants/acme/connections", headers={"Authorization": f"Bearer {admin_token}"}
    ).json()
    assert [(row["username"], row["read_only"], row["client_id"]) for row in connections] == [
        ("writer", True, client_id)
    ]


def test_a_person_who_is_not_a_member_is_told_why_in_chromium(platform, chromium, shots):
    url, _, _ = _authorization_url(platform)
    page = chromium.new_page(viewport={"width": 900, "height": 700})
    page.goto(url)
    _sign_in(page, "outsider")
    assert page.get_by_role("heading", name="You cannot allow this connection").is_visible()
    assert page.get_by_role("alert").get_by_text("not a member of").is_visible()
    assert page.get_by_role("button", name="Allow").count() == 0
    page.screenshot(path=str(shots / "not-a-member.png"), full_page=True)
