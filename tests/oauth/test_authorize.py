"""Sign-in, the consent page and the authorization code, through the real HTML forms."""

import json
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client

from mcp_gateway.tools.call.calls import visible_tools
from oauth.models import AuthorizationCode, Connection
from tenants.callers import caller_for
from tests.oauth.flow import (
    REDIRECT_URI,
    allow,
    authorize_query,
    connect,
    consent_page,
    exchange,
    hidden_fields,
    pkce_pair,
    register,
    resource,
)


def _signed_in(username: str) -> Client:
    from django.contrib.auth import get_user_model

    browser = Client()
    browser.force_login(get_user_model().objects.get(username=username))
    return browser


def test_the_authorization_endpoint_sends_a_stranger_to_sign_in_first(acme):
    client_id = register(Client())["client_id"]
    query = authorize_query(client_id, pkce_pair()[1])
    response = Client().get("/oauth/authorize/?" + urlencode(query))
    assert response.status_code == 302
    login = urlsplit(response["Location"])
    assert login.path == "/accounts/login/"
    assert parse_qs(login.query)["next"][0].startswith("/oauth/authorize/?")


def test_the_sign_in_form_takes_username_and_password_with_csrf_and_returns_to_consent(acme):
    from django.contrib.auth import get_user_model

    get_user_model().objects.filter(username="reader").update()
    user = get_user_model().objects.get(username="reader")
    user.set_password("correct horse battery")
    user.save()
    client_id = register(Client())["client_id"]
    next_url = "/oauth/authorize/?" + urlencode(authorize_query(client_id, pkce_pair()[1]))
    browser = Client(enforce_csrf_checks=True)
    page = browser.get("/accounts/login/?" + urlencode({"next": next_url}))
    assert page.status_code == 200
    form = hidden_fields(page.content.decode())
    assert 'name="username"' in page.content.decode() and 'name="password"' in page.content.decode()

    wrong = browser.post("/accounts/login/", {**form, "username": "reader", "password": "nope"})
    assert wrong.status_code == 200 and 'role="alert"' in wrong.content.decode()

    signed_in = browser.post(
        "/accounts/login/", {**form, "username": "reader", "password": "correct horse battery"}
    )
    assert signed_in.status_code == 302
    assert signed_in["Location"] == next_url
    assert browser.get(next_url).status_code == 200


@pytest.mark.parametrize(
    "target", ["https://evil.example/steal", "//evil.example/steal", "http://testserver.evil.example/"]
)
def test_sign_in_never_redirects_to_another_site(acme, target):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username="reader")
    user.set_password("correct horse battery")
    user.save()
    response = Client().post(
        "/accounts/login/", {"username": "reader", "password": "correct horse battery", "next": target}
    )
    assert response.status_code == 302
    assert response["Location"] == "/accounts/"


def test_the_consent_page_names_client_tenant_and_the_tools_the_caller_will_see(acme, deploy):
    deploy(acme)
    client_id = register(Client(), client_name="Claude")["client_id"]
    page = consent_page(_signed_in("reader"), authorize_query(client_id, pkce_pair()[1]))
    html = page.content.decode()
    assert page.status_code == 200
    expected = visible_tools(acme, caller_for(acme, acme.memberships.get(user__username="reader").user))
    assert f"will see {len(expected)} tools" in html
    for entry in expected:
        assert entry.wire_name in html
    assert "Claude" in html and "registered dynamically" in html
    assert acme.name in html and "acme" in html
    assert ">Allow</button>" in html and ">Deny</button>" in html
    assert 'name="read_only"' in html


def test_a_writer_sees_more_tools_than_a_reader_on_the_consent_page(acme, deploy):
    deploy(acme)
    client_id = register(Client())["client_id"]
    reader = consent_page(_signed_in("reader"), authorize_query(client_id, pkce_pair()[1])).context["consent"]
    writer = consent_page(_signed_in("writer"), authorize_query(client_id, pkce_pair()[1])).context["consent"]
    assert len(writer.tools) > len(reader.tools)
    assert 0 < reader.read_only_count < len(writer.tools)


def test_someone_who_is_not_a_member_sees_why_and_cannot_allow(acme, make_tenant, make_member):
    other = make_tenant("other")
    make_member(other, "outsider")
    client_id = register(Client())["client_id"]
    browser = _signed_in("outsider")
    query = authorize_query(client_id, pkce_pair()[1])
    page = consent_page(browser, query)
    html = page.content.decode()
    assert "not a member of" in html and ">Allow</button>" not in html

    # A forged Allow issues nothing: with the fields of the page shown to them (403, not a member),
    # or with those of a page shown to a member (400: not what was shown to this user).
    forged = hidden_fields(html)
    assert browser.post("/oauth/authorize/", {**forged, "allow": "on"}).status_code == 403
    borrowed = hidden_fields(consent_page(_signed_in("reader"), query).content.decode())
    borrowed.pop("csrfmiddlewaretoken")
    assert browser.post("/oauth/authorize/", {**borrowed, "allow": "on"}).status_code == 400
    assert not AuthorizationCode.objects.exists()


def test_someone_who_is_not_a_member_can_deny_so_the_client_stops_waiting(acme, make_tenant, make_member):
    other = make_tenant("other")
    make_member(other, "outsider")
    client_id = register(Client())["client_id"]
    browser = _signed_in("outsider")
    page = consent_page(browser, authorize_query(client_id, pkce_pair()[1])).content.decode()
    assert ">Deny</button>" in page and ">Allow</button>" not in page
    answer = browser.post("/oauth/authorize/", hidden_fields(page))
    assert answer.status_code == 302
    assert parse_qs(urlsplit(answer["Location"]).query)["error"] == ["access_denied"]
    assert not AuthorizationCode.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("resource", "http://testserver/t/other/mcp"),  # another tenant the user is a member of
        ("redirect_uri", "http://127.0.0.1:9999/elsewhere"),
        ("code_challenge", "A" * 43),
        ("shown", ""),
    ],
)
def test_a_consent_post_changed_after_it_was_shown_issues_nothing(
    acme, make_tenant, make_member, field, value
):
    other = make_tenant("other")
    make_member(other, "reader")
    client_id = register(Client())["client_id"]
    browser = _signed_in("reader")
    page = consent_page(browser, authorize_query(client_id, pkce_pair()[1])).content.decode()
    assert "Allow" in page and "acme" in page
    form = {**hidden_fields(page), field: value, "allow": "on"}
    answer = browser.post("/oauth/authorize/", form)
    assert answer.status_code == 400  # not redirected: the redirect URI may be what changed
    assert "came back different from the page you were shown" in answer.content.decode()
    assert not AuthorizationCode.objects.exists() and not Connection.all_tenants.exists()


def test_the_consent_post_of_the_page_shown_still_issues_a_code_for_the_shown_resource(acme):
    client_id = register(Client())["client_id"]
    browser = _signed_in("reader")
    code = allow(browser, authorize_query(client_id, pkce_pair()[1]))
    assert AuthorizationCode.objects.get().resource == [resource()] and code


def test_deny_sends_the_user_back_with_access_denied(acme):
    client_id = register(Client())["client_id"]
    browser = _signed_in("reader")
    form = hidden_fields(consent_page(browser, authorize_query(client_id, pkce_pair()[1])).content.decode())
    answer = browser.post("/oauth/authorize/", form)
    assert answer.status_code == 302
    params = parse_qs(urlsplit(answer["Location"]).query)
    assert answer["Location"].startswith(REDIRECT_URI)
    assert params["error"] == ["access_denied"] and params["state"] == ["st4te"]
    assert params["iss"] == [_issuer()]


def _issuer() -> str:
    return json.loads(Client().get("/.well-known/oauth-authorization-server").content)["issuer"]


def test_the_authorization_response_names_the_issuer_once_rfc_9207(acme):
    client_id = register(Client())["client_id"]
    browser = _signed_in("reader")
    form = hidden_fields(consent_page(browser, authorize_query(client_id, pkce_pair()[1])).content.decode())
    form["allow"] = "on"
    answer = browser.post("/oauth/authorize/", form)

    params = parse_qs(urlsplit(answer["Location"]).query)
    assert params["iss"] == [_issuer()] and len(params["code"]) == 1  # exactly once, the metadata's issuer
    metadata = json.loads(Client().get("/.well-known/oauth-authorization-server").content)
    assert metadata["authorization_response_iss_parameter_supported"] is True


def test_consent_without_the_csrf_token_is_refused(acme):
    from django.contrib.auth import get_user_model

    client_id = register(Client())["client_id"]
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(get_user_model().objects.get(username="reader"))
    form = hidden_fields(consent_page(browser, authorize_query(client_id, pkce_pair()[1])).content.decode())
    form.pop("csrfmiddlewaretoken")
    answer = browser.post("/oauth/authorize/", {**form, "allow": "on"})
    assert answer.status_code == 403
    assert not AuthorizationCode.objects.exists()


@pytest.mark.parametrize(
    "override",
    [
        {"code_challenge": None, "code_challenge_method": None},
        {"code_challenge_method": "plain"},
        {"code_challenge_method": None},
    ],
)
def test_authorization_without_pkce_s256_is_refused_and_not_redirected(acme, override):
    client_id = register(Client())["client_id"]
    page = consent_page(_signed_in("reader"), authorize_query(client_id, pkce_pair()[1], **override))
    assert page.status_code == 400
    assert "Location" not in page


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://evil.example/callback",
        "http://127.0.0.1:8765/callback/../../evil",
        "http://127.0.0.1:8765/other",
    ],
)
def test_a_redirect_uri_that_was_not_registered_is_refused_without_redirecting(acme, redirect_uri):
    client_id = register(Client())["client_id"]
    page = consent_page(
        _signed_in("reader"), authorize_query(client_id, pkce_pair()[1], redirect_uri=redirect_uri)
    )
    assert page.status_code == 400
    assert "Location" not in page


def test_an_unknown_client_is_refused_without_redirecting(acme):
    page = consent_page(_signed_in("reader"), authorize_query("no-such-client", pkce_pair()[1]))
    assert page.status_code in (400, 401)
    assert "Location" not in page


@pytest.mark.parametrize(
    "value",
    [
        None,
        "http://testserver/t/nowhere/mcp",
        "https://elsewhere.example/t/acme/mcp",
        "http://testserver/api/",
    ],
)
def test_the_resource_must_be_the_mcp_endpoint_of_a_tenant(acme, value):
    client_id = register(Client())["client_id"]
    page = consent_page(_signed_in("reader"), authorize_query(client_id, pkce_pair()[1], resource=value))
    html = page.content.decode()
    assert ">Allow</button>" not in html


def test_a_switched_off_endpoint_cannot_be_connected(acme):
    from tenants import actions

    actions.set_tenant_setting(acme, "mcpServer", False, acting_user=None)
    client_id = register(Client())["client_id"]
    page = consent_page(_signed_in("reader"), authorize_query(client_id, pkce_pair()[1]))
    assert "no MCP endpoint" in page.content.decode()


def test_the_code_needs_the_verifier_it_was_issued_for(acme):
    api = Client()
    client_id = register(api)["client_id"]
    verifier, challenge = pkce_pair()
    code = allow(_signed_in("reader"), authorize_query(client_id, challenge))
    missing = exchange(api, client_id, code, None)
    wrong = exchange(api, client_id, code, pkce_pair()[0])
    assert missing.status_code == 400 and wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    assert exchange(api, client_id, code, verifier).status_code == 200


def test_a_reused_code_is_refused_and_ends_the_connection_it_opened(acme):
    api = Client()
    client_id = register(api)["client_id"]
    verifier, challenge = pkce_pair()
    code = allow(_signed_in("reader"), authorize_query(client_id, challenge))
    first = exchange(api, client_id, code, verifier)
    assert first.status_code == 200
    again = exchange(api, client_id, code, verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    connection = Connection.all_tenants.get()
    assert connection.revoked_at is not None
    assert connection.revoked_reason == "authorization code replayed"


def test_the_code_is_bound_to_its_redirect_uri_and_client(acme):
    api = Client()
    client_id = register(api)["client_id"]
    other_client = register(api)["client_id"]
    verifier, challenge = pkce_pair()
    code = allow(_signed_in("reader"), authorize_query(client_id, challenge))
    assert exchange(api, client_id, code, verifier, redirect_uri="http://127.0.0.1:9/x").status_code == 400
    assert exchange(api, other_client, code, verifier).status_code == 400


def test_an_unknown_client_at_the_token_endpoint_is_401_invalid_client(acme):
    response = exchange(Client(), "no-such-client", "code", "verifier")
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


def test_the_token_endpoint_refuses_a_resource_the_user_did_not_consent_to(acme, make_tenant):
    make_tenant("other")
    api = Client()
    client_id = register(api)["client_id"]
    verifier, challenge = pkce_pair()
    code = allow(_signed_in("reader"), authorize_query(client_id, challenge))
    response = exchange(api, client_id, code, verifier, resource=resource("other"))
    assert response.status_code == 400 and json.loads(response.content)["error"] == "invalid_target"


def test_codes_and_tokens_are_stored_only_as_digests(acme):
    from oauth2_provider.models import AccessToken, RefreshToken

    api = Client()
    client_id = register(api)["client_id"]
    verifier, challenge = pkce_pair()
    code = allow(_signed_in("reader"), authorize_query(client_id, challenge))
    stored_code = AuthorizationCode.objects.get().code
    tokens = exchange(api, client_id, code, verifier).json()
    assert code not in stored_code and len(stored_code) == 64
    assert AccessToken.objects.get(user__isnull=False).token == "" and RefreshToken.objects.get().token == ""
    assert tokens["access_token"].startswith("lcpo_") and tokens["refresh_token"].startswith("lcpr_")


def test_a_read_only_choice_is_kept_on_the_connection(acme):
    connect(Client(), "writer", read_only=True)
    assert Connection.all_tenants.get().read_only is True


def test_a_client_cannot_skip_the_consent_page(acme):
    connect(_signed_in("reader"), "reader")
    client_id = Connection.all_tenants.get().client_id
    page = consent_page(
        _signed_in("reader"), authorize_query(client_id, pkce_pair()[1], approval_prompt="auto")
    )
    if page.status_code == 302:  # refused back to the client, never with a code
        params = parse_qs(urlsplit(page["Location"]).query)
        assert "code" not in params and params["error"] == ["invalid_request"]
    else:
        assert ">Allow</button>" in page.content.decode()
    assert AuthorizationCode.objects.count() == 1  # only the first, consented one
