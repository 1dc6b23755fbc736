"""Sign-in, the authorization server's metadata, and dynamic client registration."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET
from oauth2_provider.views import DynamicClientRegistrationManagementView, DynamicClientRegistrationView

from oauth import throttle
from oauth.access import MCP_SCOPE
from oauth.clients import AUTH_METHODS, check_client_metadata
from oauth.exceptions import OAuthError, OriginNotConfigured
from oauth.origin import request_origin


class LoginView(auth_views.LoginView):
    """``/accounts/login/``: Django's AuthenticationForm (username, password); ``next`` stays on this site.

    Wrong passwords are counted per (source address, username) pair, per source address and per
    username, in LOGIN_FAILURE_WINDOW_SECONDS; past any limit the form answers 429 without checking
    the password. The pair's limit (LOGIN_FAILURES_PER_SOURCE_AND_USERNAME) is the tight one, so
    someone guessing from one address cannot lock the real user out of sign-in from another. The
    per-username ceiling (LOGIN_FAILURES_PER_USERNAME) is a generous bound against guessing spread
    over many addresses, which the pair and address counts alone would allow without end (OWASP's
    Authentication Cheat Sheet ties lockout to the account for this reason and warns that it lets an
    attacker deny the user service: reaching it takes at least ceiling / pair-limit addresses).
    """

    template_name = "oauth/login.html"

    def _limits(self) -> list[tuple[str, str, int]]:
        username = str(self.request.POST.get("username", ""))[:150].lower()
        source = throttle.source_of(self.request)
        return [
            # A newline never occurs in an address, so the pair's key is unambiguous.
            ("login-pair", f"{source}\n{username}", settings.LOGIN_FAILURES_PER_SOURCE_AND_USERNAME),
            ("login-source", source, settings.LOGIN_FAILURES_PER_SOURCE),
            ("login-user", username, settings.LOGIN_FAILURES_PER_USERNAME),
        ]

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        window = settings.LOGIN_FAILURE_WINDOW_SECONDS
        for scope, key, limit in self._limits():
            over = throttle.check(scope, key, limit, window)
            if over is not None:
                form = self.get_form()
                form.errors.clear()
                form.add_error(None, f"Too many failed sign-ins. Try again in {over.retry_after} seconds.")
                response = self.render_to_response(self.get_context_data(form=form), status=429)
                response["Retry-After"] = str(over.retry_after)
                return response
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        window = settings.LOGIN_FAILURE_WINDOW_SECONDS
        for scope, key, limit in self._limits():
            throttle.hit(scope, key, limit, window)
        return super().form_invalid(form)


@login_required
def signed_in(request: HttpRequest) -> HttpResponse:
    return render(request, "oauth/signed_in.html")


def server_metadata(origin: str) -> dict:
    """RFC 8414 metadata: authorization code with PKCE S256, DCR and client ID metadata documents."""

    def endpoint(name: str) -> str:
        return origin + reverse(f"oauth2_provider:{name}")

    return {
        "issuer": origin,
        "authorization_endpoint": endpoint("authorize"),
        "token_endpoint": endpoint("token"),
        "registration_endpoint": endpoint("dcr-register"),
        "revocation_endpoint": endpoint("revoke-token"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": sorted(AUTH_METHODS),
        "revocation_endpoint_auth_methods_supported": sorted(AUTH_METHODS),
        "scopes_supported": [MCP_SCOPE],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,  # RFC 9207
    }


@require_GET
def authorization_server_metadata(request: HttpRequest) -> JsonResponse:
    """``/.well-known/oauth-authorization-server`` (and the OpenID-style path clients also try)."""
    try:
        origin = request_origin(request)
    except OriginNotConfigured as err:
        return JsonResponse({"error": "temporarily_unavailable", "error_description": str(err)}, status=503)
    response = JsonResponse(server_metadata(origin))
    response["Access-Control-Allow-Origin"] = "*"
    response["Cache-Control"] = "public, max-age=3600"
    return response


def _refused_metadata(description: str) -> JsonResponse:
    return JsonResponse({"error": "invalid_client_metadata", "error_description": description}, status=400)


def _policy_refusal(request: HttpRequest) -> JsonResponse | None:
    """400 ``invalid_client_metadata`` for a body over OAUTH_REGISTRATION_MAX_BYTES or a JSON body
    outside the platform's client policy."""
    size, limit = len(request.body), settings.OAUTH_REGISTRATION_MAX_BYTES
    if size > limit:
        return _refused_metadata(f"the registration document is {size} bytes, over the {limit} allowed")
    try:
        metadata = json.loads(request.body)
    except ValueError:
        return None  # the toolkit answers malformed JSON itself
    if not isinstance(metadata, dict):
        return None
    try:
        check_client_metadata(metadata, default_auth_method="client_secret_basic")
    except OAuthError as err:
        return _refused_metadata(str(err))
    return None


def _registration_throttled(request: HttpRequest) -> JsonResponse | None:
    """429 when this source registered OAUTH_REGISTRATIONS_PER_HOUR clients within the hour."""
    over = throttle.hit("register", throttle.source_of(request), settings.OAUTH_REGISTRATIONS_PER_HOUR, 3600)
    if over is None:
        return None
    response = JsonResponse(
        {
            "error": "too_many_requests",
            "error_description": (
                f"at most {over.limit} client registrations an hour from one address; "
                f"retry in {over.retry_after} s"
            ),
        },
        status=429,
    )
    response["Retry-After"] = str(over.retry_after)
    return response


class RegistrationView(DynamicClientRegistrationView):
    """RFC 7591 registration, open to anyone (claude.ai and ChatGPT register themselves), after
    the platform's policy: authorization code only, https or loopback redirect URIs."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        refused = _policy_refusal(request) or _registration_throttled(request)
        return refused or _with_application_type(request, super().post(request, *args, **kwargs))


def _with_application_type(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """The registration response echoes the ``application_type`` registered (RFC 7591 §3.2.1)."""
    if response.status_code != 201:
        return response
    application_type = json.loads(request.body).get("application_type")  # checked by the policy
    if application_type is None:
        return response
    body = json.loads(response.content)
    return JsonResponse({**body, "application_type": application_type}, status=201, headers=_kept(response))


def _kept(response: HttpResponse) -> dict[str, str]:
    return {
        key: value for key, value in response.headers.items() if key.lower() in ("cache-control", "pragma")
    }


class RegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592 read, update and delete of a registration; an update meets the same policy."""

    def put(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return _policy_refusal(request) or super().put(request, *args, **kwargs)
