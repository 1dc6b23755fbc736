"""The front-end path of apps: /t/<tenant>/apps/<app>/<route path>."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from apps_runtime.dispatch import check_route_access, load_app, run_route
from apps_runtime.exceptions import (
    AuthenticationRequired,
    PermissionDenied,
    RequestTooLarge,
    RuntimeDomainError,
    UnsupportedMediaType,
)
from apps_runtime.sandbox.frames import FrameRejected, decode_frame
from tenants.api.authentication import bearer_token
from tenants.callers import Caller, caller_for, caller_for_token
from tenants.exceptions import InvalidToken
from tenants.models import Tenant

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def problem(status: int, code: str, detail: str, **extra: Any) -> JsonResponse:
    """An RFC 9457 problem response."""
    body = {"type": f"about:blank#{code}", "title": detail, "status": status, "code": code, **extra}
    response = JsonResponse(body, status=status, content_type="application/problem+json")
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="apps"'
    return response


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
    tenant = Tenant.objects.filter(slug=tenant_slug).first()
    if tenant is None:
        return problem(404, "not_found", "unknown tenant")
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
        response = problem(err.status, err.code, err.message)
        if err.status == 405:
            response["Allow"] = ", ".join(err.allowed)
        return response
    return JsonResponse(result.body, status=result.status, safe=False, headers=result.headers)
