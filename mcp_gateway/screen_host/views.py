"""The front-end path of screens: ``/t/<tenant>/apps/<app>/_screens/<screen>`` and its tools/call.

The page is the platform's own (no tenant script runs on it: its CSP allows its one script by hash).
It frames the screen's document (``apps_runtime.views.screen_document``) in a sandbox without
``allow-same-origin``, at the link it signs for its visitor, and relays the view's ``tools/call``
to ``tools_call`` below: a same-origin POST with the session and the CSRF token, answered by the
gateway's own tools/call (``calls.call_from_screen``).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase, JsonResponse, QueryDict
from django.middleware.csrf import get_token
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods

from apps_runtime.auth_expr import parse_auth
from apps_runtime.dispatch import LoadedApp, load_app, may_use_route
from apps_runtime.exceptions import (
    AuthenticationRequired,
    PermissionDenied,
    RequestTooLarge,
    RouteNotFound,
    RuntimeDomainError,
)
from apps_runtime.handler_contract import FrameRejected, decode_frame
from apps_runtime.manifest import defaults
from apps_runtime.screen_documents import SANDBOX_FLAGS, ScreenGrant, document_origin, document_path
from core.problems import error_response
from mcp_gateway.exceptions import InternalError, Unavailable
from mcp_gateway.protocol.errors import rpc_error
from mcp_gateway.screen_host.calls import Question, call_from_screen
from mcp_gateway.tools.resources.resources import app_tool_names
from tenants.callers import Caller, anonymous_caller, caller_for
from tenants.exceptions import TenantNotFound
from tenants.models import Tenant
from tenants.scoping import access_tenant

HERE = Path(__file__).parent
SCRIPT = (HERE / "host.js").read_text()
STYLE = (HERE / "host.css").read_text()


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode("ascii") + "'"


def host_policy(frame_origin: str) -> str:
    """The host page's CSP: its own script and style only, the screen's document as its one frame."""
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {_digest(SCRIPT)}",
            f"style-src {_digest(STYLE)}",
            f"frame-src {frame_origin}",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ]
    )


def _open(
    request: HttpRequest, slug: str, app_name: str, screen: str
) -> tuple[Tenant, Caller, LoadedApp, dict]:
    """The screen, if the visitor (signed in or not) may open it.

    Raises:
        TenantNotFound, RuntimeDomainError: no such screen (404), or not for this visitor (401, 403).
    """
    tenant = access_tenant(slug)
    caller = visitor(tenant, request)
    loaded = load_app(tenant, app_name)
    spec = (loaded.version.manifest.get("screens") or {}).get(screen)
    if spec is None:
        raise RouteNotFound(f"/_screens/{screen}")
    if not may_use_route(
        loaded.compiled.access, parse_auth(spec.get("auth", defaults.DEFAULT_ACCESS)), caller
    ):
        if not request.user.is_authenticated:
            raise AuthenticationRequired()
        raise PermissionDenied("you may not open this screen")
    return tenant, caller, loaded, spec


def visitor(tenant: Tenant, request: HttpRequest) -> Caller:
    """Who the visitor is to the screen's tenant: its member (or a platform superuser) as themselves,
    anyone else as anonymous. A person signed in for another tenant is nobody here, and the tenant's
    handlers and audit must not learn who they are."""
    caller = caller_for(tenant, request.user)
    if caller.is_authenticated and not (caller.is_member or caller.is_superuser):
        return anonymous_caller(tenant)
    return caller


def _first_call(manifest: dict, screen: str, tools: dict[str, str], query: QueryDict) -> dict | None:
    """The call a chat host would have made to show the screen: the first read-only tool of the app
    that shows it and the visitor may call, with the query's parameters as its arguments. Read-only
    only: opening a link must never change anything."""
    for tool in (manifest.get("mcp") or {}).get("tools") or []:
        shows = (tool.get("ui") or {}).get("screen") == screen
        if shows and (tool.get("annotations") or {}).get("readOnlyHint") and tool["name"] in tools:
            return {"name": tools[tool["name"]], "arguments": {key: query[key] for key in query}}
    return None


@require_http_methods(["GET", "HEAD"])
def screen_host(request: HttpRequest, tenant_slug: str, app_name: str, screen_name: str) -> HttpResponseBase:
    """The host page of a screen, for anyone the screen's ``auth`` lets in (signed-out visitors of a
    screen that needs a member are sent to sign in first)."""
    try:
        tenant, caller, loaded, spec = _open(request, tenant_slug, app_name, screen_name)
    except AuthenticationRequired as err:
        if "text/html" in request.headers.get("Accept", ""):
            return redirect(f"{settings.LOGIN_URL}?next={quote(request.get_full_path())}")
        return error_response(err)
    except (RuntimeDomainError, TenantNotFound) as err:
        return error_response(err)
    manifest = loaded.version.manifest
    tools = app_tool_names(tenant, caller, manifest)
    grant = ScreenGrant(tenant.slug, app_name, screen_name, loaded.version.number, tools).sign()
    # ``request.scheme``, which django-stubs type as optional though Django always gives one.
    origin = document_origin("https" if request.is_secure() else "http", request.get_host())
    config = {
        "frame": f"{origin}{document_path(tenant.slug, app_name, screen_name)}?grant={grant}",
        "call": f"{request.path}/tools/call",
        "csrf": get_token(request),
        "toolInput": _first_call(manifest, screen_name, tools, request.GET),
    }
    context = {
        "title": spec.get("title") or screen_name,
        "app_name": app_name,
        "tenant_name": tenant.name,
        "username": caller.username,
        "sandbox": SANDBOX_FLAGS,
        "config": config,
        "script": SCRIPT,
        "style": STYLE,
    }
    headers = {
        "Content-Security-Policy": host_policy(origin),
        "Referrer-Policy": "same-origin",
        "Cache-Control": "private, no-store",
    }
    return TemplateResponse(request, "mcp_gateway/screen_host.html", context, headers=headers)


@require_http_methods(["POST"])
def tools_call(request: HttpRequest, tenant_slug: str, app_name: str, screen_name: str) -> JsonResponse:
    """A tools/call of the screen's view, relayed by its host page: ``{"name", "arguments",
    "confirmed"}`` -> ``{"result": CallToolResult}``, ``{"confirm": {"message"}}`` (ask the visitor,
    then call again with ``confirmed``) or ``{"error": {"code", "message"}}`` (a JSON-RPC error).
    CSRF-checked (Django's middleware): only the platform's own page, in the visitor's browser, calls it."""
    try:
        tenant, caller, _, _ = _open(request, tenant_slug, app_name, screen_name)
        name, arguments, confirmed = _call_body(request)
    except (RuntimeDomainError, TenantNotFound) as err:
        return error_response(err)
    try:
        outcome = call_from_screen(tenant, caller, app_name, name, arguments, confirmed)
    except (Unavailable, InternalError) as err:
        mapped = rpc_error(err)  # the MCP endpoint's code for it (protocol.errors chooses)
        if mapped is None:  # not one the gateway expects: a platform failure with its id
            raise
        return JsonResponse({"error": {"code": mapped.error.code, "message": mapped.error.message}})
    if isinstance(outcome, Question):
        return JsonResponse({"confirm": {"message": outcome.message}})
    return JsonResponse({"result": outcome.model_dump(mode="json", by_alias=True, exclude_none=True)})


def _call_body(request: HttpRequest) -> tuple[str, dict, bool | None]:
    """The relayed call's name, arguments and answer, bounded like a route's request body.

    Raises:
        RuntimeDomainError: too large, not JSON, or not of that shape.
    """
    if len(request.body) > settings.SANDBOX_MAX_REQUEST_BYTES:
        raise RequestTooLarge("the call is too large")
    try:
        body = decode_frame(request.body)  # a route's body bound: depth and size
    except FrameRejected as err:
        raise RuntimeDomainError(f"send the call as a JSON object ({err.reason})") from err
    name, arguments, confirmed = body.get("name"), body.get("arguments") or {}, body.get("confirmed")
    if not isinstance(name, str) or not isinstance(arguments, dict) or confirmed not in (None, True, False):
        raise RuntimeDomainError('send {"name": string, "arguments": object, "confirmed": null|true|false}')
    return name, arguments, confirmed
