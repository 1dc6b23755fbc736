"""examples/oauth_client.py, the OAuth example of docs/clients.md, against a live server: a person
signs in and consents in "the browser", the platform redirects to the example's loopback port, it
lists tools."""

from __future__ import annotations

import importlib.util
from io import StringIO
from pathlib import Path
from urllib.parse import urljoin

import anyio
import httpx2
import pytest
from django.core.management import call_command

from oauth.models import Connection
from tests.oauth.flow import hidden_fields
from tests.oauth.live import PASSWORD
from tests.support.apps import cases_manifest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "oauth_client.py"


def _example():
    spec = importlib.util.spec_from_file_location("oauth_client_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def platform(mcp_url, acme, deploy, settings):
    deploy(acme, cases_manifest())
    settings.PUBLIC_BASE_URL = mcp_url("acme").split("/t/")[0]
    call_command("set_password", "reader", stdin=StringIO(PASSWORD + "\n"), stdout=StringIO())
    return acme


def browser_that(answer: str):
    """A browser whose person signs in as the reader and presses ``answer`` (Allow or Deny)."""

    async def open_url(authorization_url: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as browser:
            login_url = urljoin(authorization_url, (await browser.get(authorization_url)).headers["location"])
            form = hidden_fields((await browser.get(login_url)).text)
            signed_in = await browser.post(
                login_url, data={**form, "username": "reader", "password": PASSWORD}
            )
            consent_url = urljoin(login_url, signed_in.headers["location"])
            form = hidden_fields((await browser.get(consent_url)).text)
            if answer == "Allow":
                form["allow"] = "on"
            answered = await browser.post(consent_url, data=form)
            assert answered.status_code == 302, answered.text
            # The browser follows the redirect to the example's loopback port, as a real one does.
            assert (await browser.get(answered.headers["location"])).status_code == 200

    return open_url


def test_the_oauth_example_signs_in_through_the_browser_and_lists_the_persons_tools(mcp_url, platform):
    example = _example()
    names = anyio.run(lambda: example.list_tools_with_oauth(mcp_url(), open_browser=browser_that("Allow")))
    assert "acme_cases_find_case" in names
    connection = Connection.all_tenants.get()
    assert connection.user.username == "reader"


def test_the_oauth_example_stops_with_a_clear_error_when_the_person_denies(mcp_url, platform):
    example = _example()
    with pytest.raises(BaseException) as raised:
        anyio.run(lambda: example.list_tools_with_oauth(mcp_url(), open_browser=browser_that("Deny")))
    assert "access_denied" in repr(raised.value)
    assert not Connection.all_tenants.exists()
