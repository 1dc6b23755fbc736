"""The official SDK's OAuth client, and a person signing in and consenting through the real HTML forms."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests.oauth.flow import REDIRECT_URI, hidden_fields

PASSWORD = "correct horse battery staple"


class MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Person:
    """Opens the authorization URL as a browser would: sign in, read the consent page, press a button.

    ``app_choices``: on each visit in turn, the apps' choices to make (app -> full|read|none); apps
    left out, and every app on later visits, keep what the page preselected.
    """

    def __init__(
        self,
        username: str,
        *,
        read_only: bool = False,
        allow: bool = True,
        app_choices: list[dict[str, str]] | None = None,
    ):
        self.username, self.read_only, self.allow = username, read_only, allow
        self.app_choices = list(app_choices or [])
        self.consent_pages: list[str] = []
        self.consent_html = ""
        self.visits = 0
        self.result: AuthorizationCodeResult | None = None

    async def open(self, authorization_url: str) -> None:
        self.visits += 1
        async with httpx2.AsyncClient(timeout=30) as browser:
            to_login = await browser.get(authorization_url)
            assert to_login.status_code == 302, to_login.text
            login_url = urljoin(authorization_url, to_login.headers["location"])
            login_page = await browser.get(login_url)
            form = hidden_fields(login_page.text) | {"username": self.username, "password": PASSWORD}
            signed_in = await browser.post(login_url, data=form)
            assert signed_in.status_code == 302, signed_in.text
            consent_url = urljoin(login_url, signed_in.headers["location"])
            consent = await browser.get(consent_url)
            assert consent.status_code == 200, consent.text
            self.consent_html = consent.text
            self.consent_pages.append(consent.text)
            form = hidden_fields(consent.text)
            choices = self.app_choices.pop(0) if self.app_choices else {}
            form.update({f"app_{app}": choice for app, choice in choices.items()})
            if self.allow:
                form["allow"] = "on"
            if self.read_only:
                form["read_only"] = "on"
            answer = await browser.post(consent_url, data=form)
            assert answer.status_code == 302, answer.text
        location = answer.headers["location"]
        assert location.startswith(REDIRECT_URI)
        params = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
        self.result = AuthorizationCodeResult(
            code=params.get("code", ""), state=params.get("state"), iss=params.get("iss")
        )

    async def callback(self) -> AuthorizationCodeResult:
        return self.result


def provider(url: str, person: Person, storage: MemoryStorage, client_metadata_url: str | None = None):
    metadata = OAuthClientMetadata(
        client_name="SDK test client",
        redirect_uris=[REDIRECT_URI],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=person.open,
        callback_handler=person.callback,
        client_metadata_url=client_metadata_url,
    )


@asynccontextmanager
async def oauth_client(auth: OAuthClientProvider, url: str, *, mode: str):
    async with httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30.0, read=60.0)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


def expire_on_the_client(auth: OAuthClientProvider) -> None:
    """The client's clock passes the access token's expires_in: its next request refreshes first."""
    auth.context.token_expiry_time = time.time() - 1
