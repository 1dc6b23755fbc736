"""The front-end path of apps: /t/<tenant>/apps/<app>/<route path>."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import redirect
from django.views.decorators.csrf import csrf_exempt

from apps_runtime.auth_expr import parse_auth
from apps_runtime.bundles import bundle_dir
from apps_runtime.dispatch import RouteResult, check_route_access, load_app, may_use_route, run_route
from apps_runtime.exceptions import (
    AuthenticationRequired,
    MethodNotAllowed,
    PermissionDenied,
    RequestTooLarge,
    RouteNotFound,
    RuntimeDomainError,
    UnsupportedMediaType,
)
from apps_runtime.manifest import defaults
from apps_runtime.sandbox.exceptions import HANDLER_FAILURES
from apps_runtime.sandbox.runtime.protocol import FrameRejected, decode_frame
from apps_runtime.screens import SDK_PATH, SDK_VERSION, content_security_policy, render
from core.challenges import bearer_challenge
from core.error_ids import error_id_note
from core.problems import error_response, problem, problem_response
from tenants.api.authentication import bearer_token
from tenants.callers import Caller, caller_for, caller_for_token
from tenants.exceptions import InvalidToken, TenantNotFound
from tenants.models import Tenant
from tenants.scoping import access_tenant

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
APPS_CHALLENGE = bearer_challenge(realm="apps")


def _caller(request: HttpRequest, tenant: Tenant) -> Caller:
    raw = bearer_token(request.META.get("HTTP_AUTHORIZATION", ""))
    if raw is not None:
        try:
            return caller_for_token(tenant, raw)
        except InvalidToken as err:
            raise AuthenticationRequired() from err
    caller = caller_for(tenant, request.user)
    if caller.is_authenticated and request.method not in SAFE_METHODS:
        # Session cookies ride along on cross-site requests; bearer tokens do not.
        rejected = CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})
        if rejected is not None:
            raise PermissionDenied("CSRF check failed")
    return caller


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


@csrf_exempt
def app_route(request: HttpRequest, tenant_slug: str, app_name: str, route_path: str = "") -> JsonResponse:
    try:
        tenant = access_tenant(tenant_slug)
    except TenantNotFound as err:
        return error_response(err)
    try:
        caller = _caller(request, tenant)
        loaded = load_app(tenant, app_name)
        route, params = loaded.compiled.routes.match(request.method, "/" + route_path)
        check_route_access(loaded, route, caller)
        if caller.read_only and request.method not in SAFE_METHODS:
            raise PermissionDenied("this token is read-only")
        body = _json_body(request)
        result = run_route(
            loaded,
            route,
            caller,
            body=body,
            query={key: request.GET[key] for key in request.GET},
            params=params,
        )
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


@csrf_exempt
def app_screen(request: HttpRequest, tenant_slug: str, app_name: str, screen_name: str) -> HttpResponseBase:
    """A screen of the app for its own users: behind the app's access and the screen's auth, with a
    Content-Security-Policy that runs only the screen's own scripts (by hash) and the platform's SDK."""
    try:
        tenant = access_tenant(tenant_slug)
    except TenantNotFound as err:
        return error_response(err)
    try:
        if request.method not in ("GET", "HEAD"):
            raise MethodNotAllowed(request.method, ["GET", "HEAD"])
        caller = _caller(request, tenant)
        loaded = load_app(tenant, app_name)
        spec = (loaded.version.manifest.get("screens") or {}).get(screen_name)
        if spec is None:
            raise RouteNotFound(f"/_screens/{screen_name}")
        auth = parse_auth(spec.get("auth", defaults.DEFAULT_ACCESS))
        if not may_use_route(loaded.compiled.access, auth, caller):
            if not caller.is_authenticated:
                raise AuthenticationRequired()
            raise PermissionDenied("you may not open this screen")
    except AuthenticationRequired as err:
        if "text/html" in request.headers.get("Accept", ""):  # a person in a browser: sign in first
            return redirect(f"{settings.LOGIN_URL}?next={request.get_full_path()}")
        response = error_response(err)
        response["WWW-Authenticate"] = APPS_CHALLENGE
        return response
    except RuntimeDomainError as err:
        return error_response(err)
    root = bundle_dir(loaded.version)
    info = {"app": app_name, "tools": {}, "base": f"/t/{tenant.slug}/apps/{app_name}"}
    rendered = render(spec["file"], lambda path: (root / path).read_bytes(), SDK_PATH, info)
    headers = {
        "Content-Security-Policy": content_security_policy(spec, rendered),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cache-Control": "private, no-cache",
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
