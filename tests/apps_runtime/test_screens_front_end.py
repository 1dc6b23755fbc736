"""Screens on the app's front-end path: /t/<tenant>/apps/<app>/_screens/<screen>.

The path answers the platform's host page; the screen's own document is served at the link the
host page signs for its visitor, sandboxed to an opaque origin, and never reads a session.
"""

import base64
import hashlib
import json
import re
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps_runtime.screens import SDK_PATH
from mcp_gateway.screen_host.views import SCRIPT, STYLE
from tests.support.screen_app import CARD_CSS, FILES, screen_manifest

pytestmark = pytest.mark.django_db

CARD = "/t/acme/apps/cases/_screens/card"


@pytest.fixture
def app(acme, deploy):
    deploy(acme, screen_manifest(), FILES)
    return acme


@pytest.fixture
def as_user(app):
    def sign_in(username: str) -> Client:
        client = Client()
        client.force_login(get_user_model().objects.get(username=username))
        return client

    return sign_in


def _policy(response) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in response["Content-Security-Policy"].split("; ")}


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def host_config(response) -> dict:
    found = re.search(
        r'<script id="lcp-host" type="application/json">(.*?)</script>', response.content.decode()
    )
    return json.loads(found.group(1))


def test_the_path_answers_the_platforms_host_page_which_frames_the_screen_without_an_origin(as_user):
    response = as_user("reader").get(CARD)
    assert response.status_code == 200
    html = response.content.decode()
    assert '<iframe id="screen" title="Case card" sandbox="allow-scripts"' in html  # no allow-same-origin
    assert CARD_CSS.strip() not in html and "new App(" not in html  # no tenant content on this page
    policy = _policy(response)
    assert policy["script-src"] == [_digest(SCRIPT)]  # the platform's own script, nothing else
    assert policy["style-src"] == [_digest(STYLE)]
    assert policy["frame-src"] == ["http://testserver"]
    assert policy["frame-ancestors"] == ["'none'"]
    config = host_config(response)
    frame = urlsplit(config["frame"])
    assert frame.path == f"{CARD}/document" and frame.query.startswith("grant=")
    assert config["call"] == f"{CARD}/tools/call" and config["csrf"]


def test_the_screens_document_is_sandboxed_and_opened_by_its_signed_link_not_the_session(as_user):
    frame = host_config(as_user("reader").get(CARD))["frame"]
    response = Client().get(frame)  # no cookie at all: the link is what opens it
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    html = response.content.decode()
    assert CARD_CSS.strip() in html and "data:image/png;base64," in html
    assert f'"@modelcontextprotocol/ext-apps": "http://testserver{SDK_PATH}"' in html
    assert '"get_case": "acme_cases_get_case"' in html  # the tools this visitor may call
    assert '"create_case"' not in html  # a writer's tool: not the reader's
    policy = _policy(response)
    assert policy["sandbox"] == ["allow-scripts"]  # opened directly, it has no origin either
    assert policy["default-src"] == ["'none'"]
    assert policy["connect-src"] == ["https://api.example.com"]  # what it declares, never the platform
    assert policy["form-action"] == ["'none'"]
    assert policy["frame-ancestors"] == ["http://testserver"]
    scripts = re.findall(r'<script(?: type="(?:module|importmap)")?>(.*?)</script>', html, re.S)
    hashes = {_digest(s) for s in scripts}
    assert hashes and hashes <= set(policy["script-src"])
    # From the platform only the SDK file itself: no other platform URL loads as a script.
    assert [s for s in policy["script-src"] if not s.startswith("'sha256-")] == [
        f"http://testserver{SDK_PATH}"
    ]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "no-referrer"
    assert "Set-Cookie" not in response.headers and not response.cookies


def test_the_document_needs_its_link_even_with_a_session(as_user):
    client = as_user("root")
    assert client.get(f"{CARD}/document").status_code == 403
    frame = host_config(client.get(CARD))["frame"]
    assert client.get(frame.replace("grant=", "grant=x")).status_code == 403  # tampered
    other = host_config(as_user("writer").get("/t/acme/apps/cases/_screens/plain"))["frame"]
    assert client.get(other.replace("/plain/", "/card/")).status_code == 403  # another screen's link


def test_a_redeploy_retires_the_links_made_for_the_previous_version(as_user, app, deploy):
    frame = host_config(as_user("reader").get(CARD))["frame"]
    deploy(app, screen_manifest(), FILES)
    assert Client().get(frame).status_code == 404


def test_anonymous_callers_are_asked_to_sign_in(client, app):
    api = client.get(CARD)
    assert api.status_code == 401
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
    assert client.post(host_config(client.get(CARD))["frame"]).status_code == 405


def test_opening_the_page_shows_the_screens_read_only_tool_with_the_query_as_arguments(as_user):
    config = host_config(as_user("reader").get(f"{CARD}?case_id=c1"))
    assert config["toolInput"] == {"name": "acme_cases_get_case", "arguments": {"case_id": "c1"}}


def test_the_sdk_is_served_to_any_origin_for_views_in_sandboxed_frames(client, settings):
    response = client.get(SDK_PATH)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/javascript; charset=utf-8"
    assert response["Access-Control-Allow-Origin"] == "*"
    body = b"".join(response.streaming_content)
    assert b"McpUiAppCapabilitiesSchema" in body  # the ext-apps App SDK, pinned by digest at install


def test_with_a_screens_origin_the_frame_is_served_from_that_site(as_user, settings):
    settings.PUBLIC_BASE_URL = "https://platform.example"
    settings.SCREENS_ORIGIN = "https://usercontent.example"
    response = as_user("reader").get(CARD)
    assert _policy(response)["frame-src"] == ["https://usercontent.example"]
    frame = host_config(response)["frame"]
    assert frame.startswith(f"https://usercontent.example{CARD}/document?grant=")
    document = Client().get(frame.removeprefix("https://usercontent.example"))
    policy = _policy(document)
    assert policy["frame-ancestors"] == ["https://platform.example"]
    assert policy["sandbox"] == ["allow-scripts"]
    assert f"https://usercontent.example{SDK_PATH}" in policy["script-src"]
