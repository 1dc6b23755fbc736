"""The front-end path of apps: /t/<tenant>/apps/<app>/<route path>."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt

from apps_runtime.bundles import bundle_dir
from apps_runtime.dispatch import LoadedApp, RouteCall, RouteResult, check_route_access, load_app, run_route
from apps_runtime.exceptions import (
    AuthenticationRequired,
    MethodNotAllowed,
    PermissionDenied,
    RequestTooLarge,
    RouteNotFound,
    RuntimeDomainError,
    UnsupportedMediaType,
)
from apps_runtime.handler_contract import FrameRejected, decode_frame
from apps_runtime.routes import CONFIRM_SETTING, Route, confirm_routes
from apps_runtime.sandbox.exceptions import HANDLER_FAILURES
from apps_runtime.screen_documents import GrantRefused, ScreenGrant, document_origin, platform_origin_of
from apps_runtime.screens import SDK_PATH, SDK_VERSION, document_policy, render
from core.challenges import bearer_challenge
from core.error_ids import error_id_note
from core.problems import error_response, problem, problem_response
from tenants.api.authentication import bearer_token
from tenants.callers import Caller, anonymous_caller, caller_for_token
from tenants.exceptions import InvalidToken, TenantNotFound
from tenants.models import Tenant
from tenants.scoping import access_tenant

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
APPS_CHALLENGE = bearer_challenge(realm="apps")


def _caller(request: HttpRequest, tenant: Tenant) -> Caller:
    """A bearer token's caller, else the anonymous caller. The session cookie is never read here: the
    platform's pages do not call app routes, so a request that carries it comes from something else,
    such as tenant script in a visitor's browser; screens reach their app through the host page's
    bridge (``callServerTool``), which calls tools as the signed-in member."""
    raw = bearer_token(request.META.get("HTTP_AUTHORIZATION", ""))
    if raw is None:
        return anonymous_caller(tenant)
    try:
        return caller_for_token(tenant, raw)
    except InvalidToken as err:
        raise AuthenticationRequired() from err


def _refuse_unconfirmed(tenant: Tenant, loaded: LoadedApp, route: Route) -> None:
    """A route behind a ``confirm`` tool runs only once a person said yes, and nobody here can ask: a
    token's holder may be a program a model drives. While the tenant's ``confirmDestructiveTools`` is
    on, such a route is refused on the front-end path; MCP clients (elicitation) and screens (the host
    page's dialog) ask, and so do approvals.

    Raises:
        PermissionDenied: the route needs a confirmation.
    """
    if route.key in confirm_routes(loaded.version.manifest) and tenant.setting(CONFIRM_SETTING):
        raise PermissionDenied(
            f"{route.key} needs the user's confirmation before it runs (its tool is marked confirm), which "
            "this path cannot ask for: call the tool over MCP or from a screen, where the user is asked"
        )


def _json_body(request: HttpRequest) -> dict:
    if int(request.META.get("CONTENT_LENGTH") or 0) > settings.SANDBOX_MAX_REQUEST_BYTES:
        raise RequestTooLarge("request body is too large")
    raw = request.body
    if len(raw) > settings.SANDBOX_MAX_REQUEST_BYTES:
        raise RequestTooLarge("request body is too large")
    if not raw.strip():
        return {}
    if request.content_type not in ("application/json", "") and not request.content_type.endswith("+json"):
        raise UnsupportedMediaType(f"send JSON, not {request.content_type}")
    try:
        # The handler's own frames are held to the same nesting bound: a deeply nested body would
        # otherwise raise RecursionError here or in whatever walks it next.
        body = decode_frame(raw)
    except FrameRejected as err:
        raise RuntimeDomainError(f"request body must be a JSON object ({err.reason})") from err
    return body


# An app route answers JSON its handler (tenant code) wrote: opened in a browser it is a document on
# the platform's origin, so it gets no origin and runs nothing, whatever a browser makes of it.
ROUTE_ANSWER_POLICY = "sandbox; default-src 'none'; frame-ancestors 'none'"


@csrf_exempt
def app_route(request: HttpRequest, tenant_slug: str, app_name: str, route_path: str = "") -> JsonResponse:
    response = _route_answer(request, tenant_slug, app_name, route_path)
    response["Content-Security-Policy"] = ROUTE_ANSWER_POLICY
    return response


def _route_answer(request: HttpRequest, tenant_slug: str, app_name: str, route_path: str) -> JsonResponse:
    try:
        tenant = access_tenant(tenant_slug)
    except TenantNotFound as err:
        return error_response(err)
    try:
        caller = _caller(request, tenant)
        loaded = load_app(tenant, app_name)
        if not caller.carries(app_name, request.method in SAFE_METHODS):
            raise PermissionDenied(f"this token does not carry the app {app_name}")
        route, params = loaded.compiled.routes.match(request.method, "/" + route_path)
        check_route_access(loaded, route, caller)
        _refuse_unconfirmed(tenant, loaded, route)
        if caller.read_only and request.method not in SAFE_METHODS:
            raise PermissionDenied("this token is read-only")
        body = _json_body(request)
        query = {key: request.GET[key] for key in request.GET}
        result = run_route(RouteCall(loaded, route, caller, body=body, query=query, params=params))
    except RuntimeDomainError as err:
        response = error_response(err)
        if err.status == 401:
            response["WWW-Authenticate"] = APPS_CHALLENGE
        return response
    if result.failed:
        return _failure_response(result)
    return JsonResponse(result.body, status=result.status, safe=False, headers=result.headers)


def _failure_response(result: RouteResult) -> JsonResponse:
    """A failed handler run as a problem: its kind, its error id, and where its admins read it."""
    _, title = HANDLER_FAILURES[result.error_code]
    body = problem(
        result.status,
        result.error_code,
        f"{title} {error_id_note(result.error_id)}; a tenant admin reads what happened at {result.error_url} "
        "or on the tenant console's Errors page",
        title=title,
        errorId=result.error_id,
        instance=result.error_url,
    )
    return problem_response(body, headers=result.headers)


@csrf_exempt  # reads no session: whatever a cross-site request carries is ignored
@xframe_options_exempt  # its CSP's frame-ancestors names the host page's origin
def screen_document(
    request: HttpRequest, tenant_slug: str, app_name: str, screen_name: str
) -> HttpResponseBase:
    """A screen's document, for the host page's frame: opened by the signed link the host page made
    for its visitor (``ScreenGrant``), never by the visitor's session, sandboxed by its CSP."""
    try:
        if request.method not in ("GET", "HEAD"):
            raise MethodNotAllowed(request.method, ["GET", "HEAD"])
        grant = ScreenGrant.read(
            request.GET.get("grant", ""), tenant=tenant_slug, app=app_name, screen=screen_name
        )
        tenant = access_tenant(tenant_slug)
        loaded = load_app(tenant, app_name)
        spec = (loaded.version.manifest.get("screens") or {}).get(screen_name)
        if spec is None or loaded.version.number != grant.version:
            raise RouteNotFound(f"/_screens/{screen_name} (the app changed: open the screen again)")
    except GrantRefused as err:
        return error_response(PermissionDenied(str(err)))
    except (RuntimeDomainError, TenantNotFound) as err:
        return error_response(err)
    root = bundle_dir(loaded.version)
    here = document_origin(request.scheme, request.get_host())
    info = {"app": app_name, "tools": grant.tools, "base": None}
    sdk_url = f"{here}{SDK_PATH}"
    rendered = render(spec["file"], lambda path: (root / path).read_bytes(), sdk_url, info)
    host = platform_origin_of(request.scheme, request.get_host())
    policy = document_policy(spec, rendered, sdk_url=sdk_url, host_origin=host, platform_origins=(host, here))
    headers = {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",  # its URL carries the grant
        "Cache-Control": "private, no-store",
    }
    return HttpResponse(rendered.html, content_type="text/html; charset=utf-8", headers=headers)


SDK_FILE = (
    Path(settings.BASE_DIR) / "lowcode_platform" / "vendor" / f"ext-apps-{SDK_VERSION}" / "app-with-deps.js"
)


def ext_apps_sdk(request: HttpRequest) -> HttpResponseBase:
    """The ext-apps App SDK (MIT) screens import. Any origin may load it: an MCP Apps host renders a
    view in a sandboxed frame whose origin is opaque, and a module script is fetched with CORS."""
    if not SDK_FILE.is_file():
        body = problem(
            404, "not_found", "the ext-apps SDK is not installed here: run bash .ci/fetch-ext-apps"
        )
        return problem_response(body)
    response = FileResponse(SDK_FILE.open("rb"), content_type="text/javascript; charset=utf-8")
    response["Access-Control-Allow-Origin"] = "*"
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    response["X-Content-Type-Options"] = "nosniff"
    return response
