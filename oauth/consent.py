"""The authorization endpoint: sign-in, then a consent page naming client, tenant and tools.

The toolkit's view validates the request (client, redirect URI, PKCE) and issues the code; this
one adds what the platform decides: which tenant the ``resource`` names, whether the signed-in
user may consent for it (members only), and what the connection will see. The request comes back
from the browser in the form's hidden fields; the page signs what it showed (``shown_request``)
and a POST whose fields differ (another ``resource``, client or redirect) is refused, so the
decision applies to exactly what the user saw. The tool list is the
gateway's per-caller catalog, so the page is completed by the gateway's subclass
(``mcp_gateway.consent``): the gateway depends on this package, not the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.core import signing
from django.http import HttpRequest, HttpResponse
from oauth2_provider.views import AuthorizationView

from apps_runtime.compiled import compiled_version
from apps_runtime.models import App
from oauth.access import is_app_scope
from oauth.exceptions import OAuthError, OriginNotConfigured
from oauth.forms import ConsentForm
from oauth.origin import request_origin, slug_of_resource
from tenants.callers import Caller, caller_for
from tenants.models import Tenant

# The authorization request's fields the form carries back (the toolkit's AllowForm), all bound.
REQUEST_FIELDS = (
    "client_id",
    "redirect_uri",
    "response_type",
    "scope",
    "state",
    "nonce",
    "code_challenge",
    "code_challenge_method",
    "claims",
    "resource",
)
_SHOWN_SALT = "oauth.consent.shown"
# A consent page may sit open a while, but not for days: past this, start again from the client.
SHOWN_MAX_AGE_SECONDS = 3600
CHANGED = (
    "The consent form came back different from the page you were shown, or too late. Nothing was "
    "granted: start the connection again from the application."
)


def shown_request(fields: dict, user_id: int) -> str:
    """The request shown to ``user_id``, signed for the form (``matches_shown`` checks it)."""
    request = {name: str(fields.get(name) or "").strip() for name in REQUEST_FIELDS}
    return signing.dumps({"user": user_id, "request": request}, salt=_SHOWN_SALT, compress=True)


def matches_shown(cleaned: dict, user_id: int) -> bool:
    """Whether a posted form asks for exactly the request its page was shown for, by this user."""
    try:
        shown = signing.loads(cleaned.get("shown") or "", salt=_SHOWN_SALT, max_age=SHOWN_MAX_AGE_SECONDS)
    except signing.BadSignature:  # SignatureExpired too
        return False
    posted = {name: str(cleaned.get(name) or "").strip() for name in REQUEST_FIELDS}  # as forms strip
    return shown == {"user": user_id, "request": posted}


@dataclass(frozen=True)
class ToolLine:
    name: str
    title: str | None
    read_only: bool


@dataclass(frozen=True)
class AppLine:
    """An app the member can open, offered on the consent page: use it, read-only, or leave it out."""

    name: str
    title: str
    choice: str = "full"  # preselected: what the client's requested app scopes ask for


# A choice per app on the consent page (radio ``app_<name>``); absent: the default, "full".
APP_CHOICES = ("full", "read", "none")


@dataclass(frozen=True)
class Consent:
    """What the page shows: the tenant and the tools, or why this user cannot consent."""

    tenant: Tenant | None = None
    refusal: str | None = None
    roles: list[str] = field(default_factory=list)
    tools: list[ToolLine] = field(default_factory=list)
    apps: list[AppLine] = field(default_factory=list)

    def scopes_chosen(self, posted) -> list[str]:
        """The app scopes of the choices ``posted`` (a QueryDict): empty when every app is carried
        in full (not narrowed), else ``app:<name>`` or ``app:<name>:read`` for each carried app."""
        choices = {app.name: posted.get(f"app_{app.name}") or app.choice for app in self.apps}
        choices = {name: c if c in APP_CHOICES else "none" for name, c in choices.items()}
        if all(choice == "full" for choice in choices.values()):
            return []
        scopes = [
            f"app:{name}" if c == "full" else f"app:{name}:read" for name, c in choices.items() if c != "none"
        ]
        return scopes or ["app:"]  # nothing carried: a scope no app has, so it stays narrowed

    @property
    def read_only_count(self) -> int:
        return sum(tool.read_only for tool in self.tools)


@dataclass(frozen=True)
class ClientDescription:
    name: str
    metadata_url: str | None
    origin: str


def describe_client(application) -> ClientDescription:
    """How the page names a client: its metadata document, or how it was registered."""
    if application.registration_source == application.RegistrationSource.CIMD:
        return ClientDescription(application.name or application.client_id, application.client_id, "")
    how = {
        application.RegistrationSource.DCR: "registered dynamically",
    }.get(application.registration_source, "registered by the platform operator")
    return ClientDescription(application.name or "An unnamed application", None, how)


class ConsentView(AuthorizationView):
    """GET shows the consent page; POST is Allow or Deny (CSRF-protected, re-validated)."""

    template_name = "oauth/consent.html"
    form_class = ConsentForm
    # Set only by a POST of Allow for a tenant the user may consent to. The toolkit's own shortcuts
    # (approval_prompt=auto, skip_authorization) reach create_authorization_response without it,
    # and the validator then refuses to issue a code: nothing is granted without this page.
    granted: dict | None = None

    def endpoint_tenant(self, slug: str) -> Tenant:
        """The tenant whose MCP endpoint is at ``/t/<slug>/mcp``.

        Raises:
            Exception: a subclass raises its own error for an unknown or switched-off endpoint.
        """
        raise NotImplementedError

    def consent_tools(self, tenant: Tenant, caller: Caller) -> list[ToolLine]:
        """The tools ``caller`` would see at the tenant's endpoint, in listing order."""
        raise NotImplementedError

    def consent(self, resource: str | None) -> Consent:
        user = self.request.user
        resources = (resource or "").split()
        if len(resources) != 1:
            return Consent(
                refusal="The application did not say which MCP endpoint it wants to use "
                "(one resource parameter, RFC 8707). Connect it with the endpoint's URL."
            )
        try:
            tenant = self.endpoint_tenant(slug_of_resource(request_origin(self.request), resources[0]))
        except (OAuthError, LookupError) as err:
            return Consent(refusal=f"There is no MCP endpoint at {resources[0]} ({err}).")
        caller = caller_for(tenant, user)
        if not caller.is_member:
            return Consent(
                tenant=tenant,
                refusal=f"You are signed in as {user.get_username()}, who is not a member of "
                f"{tenant.name} ({tenant.slug}). Only its members can connect applications to it: "
                "ask one of its admins to add you, or sign in as a member.",
            )
        return Consent(
            tenant=tenant,
            roles=sorted(caller.roles),
            tools=self.consent_tools(tenant, caller),
            apps=consent_apps(tenant, caller, self.requested_scopes()),
        )

    def requested_scopes(self) -> list[str]:
        raw = self.request.GET.get("scope") or self.request.POST.get("scope") or ""
        return raw.split()

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.GET.get("code_challenge_method") != "S256":
            # PKCE with S256 only; refused before anything else, and never redirected anywhere.
            error = {
                "error": "invalid_request",
                "description": 'PKCE is required: code_challenge_method "S256".',
            }
            return self.render_to_response({"error": error}, status=400)
        return super().get(request, *args, **kwargs)

    def get_initial(self) -> dict:
        initial = super().get_initial()
        return {**initial, "shown": shown_request(initial, self.request.user.pk)}

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        if "application" in context:
            context["consent"] = self.consent(context.get("resource"))
            context["client"] = describe_client(context["application"])
        return context

    def form_valid(self, form: ConsentForm) -> HttpResponse:
        self.granted = None
        if not matches_shown(form.cleaned_data, self.request.user.pk):
            # Not redirected: the redirect URI is among what may have been changed.
            error = {"error": "invalid_request", "description": CHANGED}
            return self.render_to_response({"error": error}, status=400)
        if form.cleaned_data.get("allow"):
            consent = self.consent(form.cleaned_data.get("resource"))
            if consent.refusal:
                return self.render_to_response({"consent": consent, "form": form}, status=403)
            self.granted = {
                "lcp_tenant": consent.tenant,
                "lcp_read_only": form.cleaned_data["read_only"],
                "lcp_apps": consent.scopes_chosen(self.request.POST),
            }
        return super().form_valid(form)

    def redirect(self, redirect_to: str, application) -> HttpResponse:
        return super().redirect(with_issuer(self.request, redirect_to), application)

    def create_authorization_response(self, request, scopes, credentials, allow):
        if allow and self.granted:
            credentials = {**credentials, **self.granted}
        return super().create_authorization_response(request, scopes, credentials, allow)


def consent_apps(tenant: Tenant, caller: Caller, requested: list[str]) -> list[AppLine]:
    """The tenant's deployed apps ``caller`` can open (the app's ``access``), by name, each preselected
    as the client's ``requested`` app scopes ask (none asked: every app, in full)."""
    asked = {scope for scope in requested if is_app_scope(scope)}
    rows = (
        App.objects.for_tenant(tenant).filter(active_version__isnull=False).select_related("active_version")
    )
    lines = []
    for app in rows.order_by("name"):
        if not compiled_version(app.active_version).access.allows(caller):
            continue
        choice = "full"
        if asked:
            choice = (
                "full"
                if f"app:{app.name}" in asked
                else "read"
                if f"app:{app.name}:read" in asked
                else "none"
            )
        lines.append(AppLine(app.name, app.active_version.manifest.get("title") or app.name, choice))
    return lines


def with_issuer(request: HttpRequest, redirect_to: str) -> str:
    """An authorization response (a redirect with ``code`` or ``error``) with the RFC 9207 ``iss``.

    Exactly the ``issuer`` of the platform's metadata, once (the toolkit's own, derived from the
    request's URL, is replaced), on success and error alike, so a client can tell which authorization
    server answered (a mix-up defence the 2026-07-28 revision asks clients to apply).
    """
    parts = urlsplit(redirect_to)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if not {"code", "error"} & {key for key, _ in query}:
        return redirect_to  # not an authorization response (the sign-in page, say)
    try:
        issuer = request_origin(request)
    except OriginNotConfigured:
        return redirect_to
    query = [(key, value) for key, value in query if key != "iss"] + [("iss", issuer)]
    return urlunsplit(parts._replace(query=urlencode(query)))
