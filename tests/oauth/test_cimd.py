"""Client ID metadata documents: fetched over https, bounded, cached, never from private addresses."""

import threading
import time

import pytest
from django.test import Client
from oauth2_provider import cimd
from oauth2_provider.models import Application

from oauth.cimd import PlatformMetadataFetcher
from tests.oauth.flow import REDIRECT_URI, allow, authorize_query, consent_page, exchange, pkce_pair


@pytest.fixture
def browser(acme):
    from django.contrib.auth import get_user_model

    browser = Client()
    browser.force_login(get_user_model().objects.get(username="reader"))
    return browser


def test_a_client_named_by_its_metadata_document_connects(cimd_server, browser):
    client_id = cimd_server.client_document("/oauth/client.json", [REDIRECT_URI])
    verifier, challenge = pkce_pair()
    page = consent_page(browser, authorize_query(client_id, challenge))
    assert "Metadata document client" in page.content.decode() and client_id in page.content.decode()
    code = allow(browser, authorize_query(client_id, challenge))
    assert exchange(Client(), client_id, code, verifier).status_code == 200
    assert Application.objects.get(client_id=client_id).registration_source == "cimd"


def test_the_document_is_cached_not_fetched_on_every_request(cimd_server, browser):
    client_id = cimd_server.client_document("/oauth/client.json", [REDIRECT_URI])
    for _ in range(3):
        consent_page(browser, authorize_query(client_id, pkce_pair()[1]))
    assert cimd_server.requests == ["/oauth/client.json"]


def test_a_document_too_large_is_refused(cimd_server, browser):
    client_id = cimd_server.client_document("/big.json", [REDIRECT_URI], padding="x" * 64 * 1024)
    page = consent_page(browser, authorize_query(client_id, pkce_pair()[1]))
    assert page.status_code in (400, 401) and "Location" not in page
    assert not Application.objects.filter(client_id=client_id).exists()


def test_a_document_with_a_plain_http_redirect_uri_is_refused(cimd_server, browser):
    client_id = cimd_server.client_document("/http.json", ["http://example.com/cb"])
    page = consent_page(
        browser, authorize_query(client_id, pkce_pair()[1], redirect_uri="http://example.com/cb")
    )
    assert page.status_code in (400, 401) and "Location" not in page


def test_a_document_naming_another_client_id_is_refused(cimd_server, browser):
    client_id = cimd_server.base + "/claims-other.json"
    cimd_server.publish(
        "/claims-other.json",
        {"client_id": "https://claude.ai/oauth/client.json", "redirect_uris": [REDIRECT_URI]},
    )
    page = consent_page(browser, authorize_query(client_id, pkce_pair()[1]))
    assert page.status_code in (400, 401)


def test_loopback_documents_are_refused_unless_allowed(cimd_server, browser, settings):
    settings.OAUTH_CIMD_ALLOW_LOOPBACK = False
    client_id = cimd_server.client_document("/oauth/client.json", [REDIRECT_URI])
    page = consent_page(browser, authorize_query(client_id, pkce_pair()[1]))
    assert page.status_code in (400, 401)
    assert cimd_server.requests == []


@pytest.mark.parametrize(
    "client_id",
    [
        "https://10.1.2.3/client.json",
        "https://192.168.0.1/client.json",
        "https://172.16.5.4/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[fd00::1]/client.json",
        "https://[::ffff:10.0.0.1]/client.json",
        "https://0.0.0.0/client.json",
    ],
)
def test_a_document_at_a_private_address_is_never_fetched(browser, settings, client_id):
    settings.OAUTH_CIMD_ALLOW_LOOPBACK = True  # loopback allowed; private ranges still are not
    page = consent_page(browser, authorize_query(client_id, pkce_pair()[1]))
    assert page.status_code in (400, 401) and "Location" not in page
    assert not Application.objects.filter(client_id=client_id).exists()


def test_an_unknown_metadata_document_client_at_the_token_endpoint_is_invalid_client(acme, settings):
    settings.OAUTH_CIMD_ALLOW_LOOPBACK = False
    response = exchange(Client(), "https://127.0.0.1:9/none.json", "code", "verifier")
    assert response.status_code == 401


def test_a_document_dripped_a_byte_at_a_time_is_refused_at_the_fetch_deadline(cimd_server, browser):
    """Issue 26 item 5: the read timeout restarted with every byte, so a drip held a fetch for a minute."""
    client_id = cimd_server.client_document("/drip.json", [REDIRECT_URI])
    cimd_server.drips["/drip.json"] = 0.5  # ~150 s for the whole document

    with pytest.raises(cimd.CIMDError, match="not received in time"):
        PlatformMetadataFetcher().fetch(client_id)
    page = consent_page(browser, authorize_query(client_id, pkce_pair()[1]))
    assert page.status_code in (400, 401) and "Location" not in page
    assert not Application.objects.filter(client_id=client_id).exists()


def test_one_host_holds_at_most_its_own_fetch_slots(cimd_server, settings):
    settings.OAUTH_CIMD_FETCHES_PER_HOST = 2
    slow = cimd_server.client_document("/slow.json", [REDIRECT_URI])
    cimd_server.drips["/slow.json"] = 0.2
    errors: list[Exception] = []

    def fetch() -> None:
        try:
            PlatformMetadataFetcher().fetch(slow)
        except cimd.CIMDError as err:
            errors.append(err)

    holders = [threading.Thread(target=fetch) for _ in range(2)]
    for thread in holders:
        thread.start()
    deadline = time.monotonic() + 20
    while cimd_server.requests.count("/slow.json") < 2:  # both fetches are in flight
        assert time.monotonic() < deadline, "the fetches never reached the server"
        time.sleep(0.02)
    with pytest.raises(cimd.CIMDError, match="too many client_id documents"):
        PlatformMetadataFetcher().fetch(cimd_server.client_document("/other.json", [REDIRECT_URI]))
    for thread in holders:
        thread.join(timeout=30)
    assert [str(e) for e in errors] == ["client_id document was not received in time"] * 2
    # Once they are done, the host may be fetched again.
    metadata, _ = PlatformMetadataFetcher().fetch(cimd_server.client_document("/ok.json", [REDIRECT_URI]))
    assert metadata["redirect_uris"] == [REDIRECT_URI]
