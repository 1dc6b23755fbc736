"""The playground: call one of an app's tools, read a resource or get a prompt as yourself, and see what a
client gets; a screen opens on the front-end path's host page.

The call is the host page's (``call_from_screen``: the gateway's one ``call_tool``, as the signed-in
admin): arguments checked against ``inputSchema``, rate limits, confirmation, output budget and one
audit row. The page shows the result as a client gets it, that audit row, the handler's error record
(trace and logs) when it failed, and the tool as a model sees it (its tools/list entry and token cost).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import mcp.types as types
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from apps_runtime.models import App, HandlerError
from console import playground
from console import playground_reads as reads
from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.pages import render_page
from mcp_gateway.exceptions import InternalError, ToolUnavailable
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.screen_host.calls import Question, call_from_screen
from mcp_gateway.tools.call.preview import tools_list
from mcp_gateway.tools.catalog.catalog import CatalogEntry, catalog_for
from mcp_gateway.tools.catalog.output_budget import TRUNCATED_KEY
from mcp_gateway.tools.catalog.token_estimate import estimate_tokens
from tenants.callers import Caller, caller_for


def _truncation(structured: object) -> str:
    """The output budget's cut, as ``structuredContent.truncated`` tells a client ("" when not cut)."""
    cut = structured.get(TRUNCATED_KEY) if isinstance(structured, dict) else None
    if not isinstance(cut, dict):
        return ""
    returned, total = cut.get("returned"), cut.get("total")
    if not isinstance(returned, int) or not isinstance(total, int) or returned >= total:
        return ""
    return f"Truncated by the output budget: {returned} of {total} items returned, {total - returned} cut"


def _result_view(result: types.CallToolResult) -> dict:
    """The result in wire form, as a client reads it."""
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    structured = wire.get("structuredContent")
    return {
        "truncated": _truncation(structured),
        "is_error": bool(wire.get("isError")),
        "texts": [block["text"] for block in wire.get("content", []) if block.get("type") == "text"],
        "structured": json.dumps(structured, indent=2, ensure_ascii=False)
        if structured is not None
        else None,
        "meta": json.dumps(wire["_meta"], indent=2) if wire.get("_meta") else None,
    }


def _picked(request: HttpRequest, key: str) -> str | None:
    return request.POST.get(key) if request.method == "POST" else request.GET.get(key)


def _screens(page: TenantPage, app: str) -> list[tuple[str, str]]:
    """The active version's screens: (name, title)."""
    found = App.objects.for_tenant(page.tenant).select_related("active_version").filter(name=app).first()
    if found is None:
        raise ConsoleNotFound()
    screens = (found.active_version.manifest.get("screens") or {}) if found.active_version else {}
    return [(name, spec.get("title") or name) for name, spec in sorted(screens.items())]


@tenant_page(admin=True)
def play(request: HttpRequest, page: TenantPage, app: str) -> HttpResponse:
    caller = caller_for(page.tenant, request.user)
    screens = _screens(page, app)
    listing = {entry["name"]: entry for entry in tools_list(page.tenant, caller).tools}
    tools = {
        e.wire_name: e
        for e in catalog_for(page.tenant).entries
        if e.app_name == app and e.wire_name in listing
    }
    names = list(tools)
    resources = reads.app_resources(page.tenant, caller, app)
    prompts = reads.app_prompts(page.tenant, caller, app)
    context: dict = {
        "app_name": app,
        "names": names,
        "resources": resources,
        "prompts": prompts,
        "screens": screens,
    }
    if _picked(request, "resource") is not None:
        return _resource(request, page, caller, app, resources, context)
    if _picked(request, "prompt") is not None:
        return _prompt(request, page, caller, prompts, context)
    chosen = request.POST.get("tool") or request.GET.get("tool") or (names[0] if names else "")
    if chosen and chosen not in names:
        raise ConsoleNotFound()
    context["chosen"] = chosen
    status = 200
    if chosen:
        entry = listing[chosen]
        posted = request.POST if request.method == "POST" else None
        fields = playground.fields_of(entry.get("inputSchema", {}), posted)
        context |= {
            "listing": json.dumps(entry, indent=2, ensure_ascii=False),
            "tokens": estimate_tokens([entry]),
            "fields": fields,
        }
        if posted is not None:
            arguments = playground.arguments_of(fields)
            context |= _run(request, page, caller, app, chosen, arguments)
            context["screen_link"] = _screen_link(page, app, tools[chosen], arguments)
            status = context.pop("status", 200)
    return render_page(request, page, "playground.html", context, current="console:apps", status=status)


def _screen_link(page: TenantPage, app: str, entry: CatalogEntry, arguments: dict) -> str:
    """The front-end path's host page showing this call in the tool's screen ("" when it has none).

    The host page makes a read-only tool's call from its query (string arguments only), as the
    app's users open it; the screen's script runs there, in its own frame, never on the console.
    """
    screen = ((entry.ui or {}).get("resourceUri") or "").rpartition("/")[2]
    if not screen or not entry.read_only or not all(isinstance(v, str) for v in arguments.values()):
        return ""
    path = reverse("app-screen", args=[page.tenant.slug, app, screen])
    return f"{path}?{urlencode(arguments)}" if arguments else path


def _resource(
    request: HttpRequest,
    page: TenantPage,
    caller: Caller,
    app: str,
    resources: list[reads.ResourceEntry],
    context: dict,
) -> HttpResponse:
    wire_name = _picked(request, "resource") or ""
    entry = next((e for e in resources if e.wire_name == wire_name), None)
    if entry is None:
        raise ConsoleNotFound()
    uri = (request.POST.get("uri") or "").strip()[:2000] if request.method == "POST" else entry.pattern.uri
    listing, tokens = reads.listing_of(entry)
    context |= {"resource": entry, "uri": uri, "mode": "resource", "listing": listing, "tokens": tokens}
    status = 200
    if request.method == "POST":
        answer = reads.read_as(page.tenant, caller, app, uri)
        context["answer"] = answer
        status = 200 if not answer.refused else 422
    return render_page(request, page, "playground.html", context, current="console:apps", status=status)


def _prompt(
    request: HttpRequest, page: TenantPage, caller: Caller, prompts: list[reads.PromptEntry], context: dict
) -> HttpResponse:
    wire_name = _picked(request, "prompt") or ""
    entry = next((e for e in prompts if e.wire_name == wire_name), None)
    if entry is None:
        raise ConsoleNotFound()
    posted = request.POST if request.method == "POST" else None
    arguments = reads.prompt_arguments(entry, posted)
    listing, tokens = reads.listing_of(entry)
    context |= {
        "prompt": entry,
        "prompt_arguments": arguments,
        "mode": "prompt",
        "listing": listing,
        "tokens": tokens,
    }
    status = 200
    if posted is not None:
        answer = reads.get_as(page.tenant, caller, entry, arguments)
        context["answer"] = answer
        status = 200 if not answer.refused else 422
    return render_page(request, page, "playground.html", context, current="console:apps", status=status)


def _run(request: HttpRequest, page: TenantPage, caller, app: str, name: str, arguments: dict) -> dict:
    confirmed = {"yes": True, "no": False}.get(request.POST.get("confirmed", ""))
    try:
        answer = call_from_screen(page.tenant, caller, app, name, arguments, confirmed)
    except ToolUnavailable:
        return {"refused": "You may not call this tool.", "status": 403}
    except InternalError as err:
        return {"refused": str(err), "status": 500}
    if isinstance(answer, Question):
        return {"question": answer.message, "arguments": json.dumps(arguments)}
    audit = (
        ToolCallAudit.objects.for_tenant(page.tenant)
        .filter(wire_name=name, user=request.user)
        .order_by("-created_at", "-id")
        .first()
    )
    error = None
    if audit is not None and audit.error_id:
        error = HandlerError.objects.for_tenant(page.tenant).filter(error_id=audit.error_id).first()
    return {
        "result": _result_view(answer),
        "arguments": json.dumps(arguments, ensure_ascii=False),
        "audit": audit,
        "error": error,
    }
