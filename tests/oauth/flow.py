"""The OAuth flow driven the way a browser and a client do it, through the Django test client."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

from django.test import Client

REDIRECT_URI = "http://127.0.0.1:8765/callback"
ORIGIN = "http://testserver"


def resource(slug: str = "acme") -> str:
    """The tenant's MCP URL at the configured origin (a live server's, in live tests)."""
    from django.conf import settings

    return f"{settings.PUBLIC_BASE_URL}/t/{slug}/mcp"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register(client: Client, **metadata) -> dict:
    body = {
        "redirect_uris": [REDIRECT_URI],
        "token_endpoint_auth_method": "none",
        "client_name": "Test client",
    }
    body.update(metadata)
    response = client.post("/oauth/register/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()


def authorize_query(client_id: str, challenge: str, **extra) -> dict:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "state": "st4te",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": resource(),
        "scope": "mcp",
    }
    params.update(extra)
    return {key: value for key, value in params.items() if value is not None}


def hidden_fields(html: str) -> dict:
    fields = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name and 'type="hidden"' in tag:
            fields[name.group(1)] = value.group(1).replace("&amp;", "&") if value else ""
    return fields


def consent_page(browser: Client, query: dict):
    return browser.get("/oauth/authorize/?" + urlencode(query))


def allow(browser: Client, query: dict, *, read_only: bool = False) -> str:
    """Show the consent page, press Allow; the code from the redirect."""
    page = consent_page(browser, query)
    assert page.status_code == 200, page.content
    form = hidden_fields(page.content.decode())
    form["allow"] = "on"
    if read_only:
        form["read_only"] = "on"
    answer = browser.post("/oauth/authorize/", form)
    assert answer.status_code == 302, answer.content
    params = parse_qs(urlsplit(answer["Location"]).query)
    assert params["state"] == ["st4te"]
    return params["code"][0]


def exchange(client: Client, client_id: str, code: str, verifier: str | None, **extra):
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        "client_id": client_id,
        "code_verifier": verifier,
        "resource": resource(),
    }
    data.update(extra)
    return client.post("/oauth/token/", {k: v for k, v in data.items() if v is not None})


def refresh(client: Client, client_id: str, refresh_token: str, **extra):
    data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    data.update(extra)
    return client.post("/oauth/token/", data)


@dataclass
class Connected:
    client_id: str
    access_token: str
    refresh_token: str
    body: dict


def connect(browser: Client, username: str = "reader", *, read_only: bool = False) -> Connected:
    """Register a client, sign in as ``username``, allow, exchange the code."""
    api = Client()
    client_id = register(api)["client_id"]
    browser.force_login(_user(username))
    verifier, challenge = pkce_pair()
    code = allow(browser, authorize_query(client_id, challenge), read_only=read_only)
    answer = exchange(api, client_id, code, verifier)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    return Connected(client_id, body["access_token"], body["refresh_token"], body)


def _user(username: str):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=username)
