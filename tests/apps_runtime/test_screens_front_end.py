"""Screens on the app's front-end path: /t/<tenant>/apps/<app>/_screens/<screen>."""

import base64
import hashlib
import re

import pytest

from apps_runtime.screens import SDK_PATH
from tests.support.screen_app import CARD_CSS, FILES, screen_manifest

pytestmark = pytest.mark.django_db

CARD = "/t/acme/apps/cases/_screens/card"


@pytest.fixture
def app(acme, deploy):
    deploy(acme, screen_manifest(), FILES)
    return acme


@pytest.fixture
def as_user(client, app, make_token):
    def login(username: str):
        _, raw = make_token(app, username)
        client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {raw}"
        return client

    return login


def _policy(response) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in response["Content-Security-Policy"].split("; ")}


def test_a_member_gets_the_screen_as_one_document_under_a_strict_policy(as_user):
    response = as_user("reader").get(CARD)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    html = response.content.decode()
    assert CARD_CSS.strip() in html and "data:image/png;base64," in html
    assert f'"@modelcontextprotocol/ext-apps": "{SDK_PATH}"' in html  # same origin: a path
    assert '"base": "/t/acme/apps/cases"' in html  # where its routes are, for the view
    policy = _policy(response)
    assert policy["default-src"] == ["'none'"]
    assert policy["connect-src"] == ["'self'", "https://api.example.com"]
    assert policy["frame-ancestors"] == ["'self'"]
    # Each inline script runs by its hash, and nothing else inline does.
    scripts = re.findall(r'<script(?: type="(?:module|importmap)")?>(.*?)</script>', html, re.S)
    hashes = {
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in scripts
    }
    assert hashes and hashes <= set(policy["script-src"])
    assert "'unsafe-inline'" not in policy["script-src"]
    assert response["X-Content-Type-Options"] == "nosniff"


def test_anonymous_callers_are_asked_to_sign_in(client, app):
    api = client.get(CARD)
    assert api.status_code == 401 and api["WWW-Authenticate"].startswith("Bearer")
    browser = client.get(CARD, HTTP_ACCEPT="text/html,application/xhtml+xml")
    assert browser.status_code == 302
    assert browser["Location"] == f"/accounts/login/?next={CARD}"


def test_a_screen_follows_its_own_auth_besides_the_apps_access(as_user):
    assert as_user("reader").get("/t/acme/apps/cases/_screens/plain").status_code == 403
    assert as_user("writer").get("/t/acme/apps/cases/_screens/plain").status_code == 200


def test_unknown_screens_and_other_methods_are_refused(as_user):
    client = as_user("root")
    assert client.get("/t/acme/apps/cases/_screens/nope").status_code == 404
    assert client.post(CARD).status_code == 405


def test_the_sdk_is_served_to_any_origin_for_views_in_sandboxed_frames(client, settings):
    response = client.get(SDK_PATH)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/javascript; charset=utf-8"
    assert response["Access-Control-Allow-Origin"] == "*"
    body = b"".join(response.streaming_content)
    assert b"McpUiAppCapabilitiesSchema" in body  # the ext-apps App SDK, pinned by digest at install
