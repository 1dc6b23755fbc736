"""The playground: call one of an app's tools as yourself and see what a client gets.

The call is the host page's (``call_from_screen``: the gateway's one ``call_tool``, as the signed-in
admin): arguments checked against ``inputSchema``, rate limits, confirmation, output budget and one
audit row. The page shows the result as a client gets it, that audit row, the handler's error record
(trace and logs) when it failed, and the tool as a model sees it (its tools/list entry and token cost).
"""

from __future__ import annotations

import json

import mcp.types as types
from django.http import HttpRequest, HttpResponse

from apps_runtime.models import App, HandlerError
from console import playground
from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.pages import render_page
from mcp_gateway.exceptions import InternalError, ToolUnavailable
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.screen_host.calls import Question, call_from_screen
from mcp_gateway.tools.call.preview import tools_list
from mcp_gateway.tools.catalog.catalog import catalog_for
from mcp_gateway.tools.catalog.token_estimate import estimate_tokens
from tenants.callers import caller_for


def _result_view(result: types.CallToolResult) -> dict:
    """The result in wire form, as a client reads it."""
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    structured = wire.get("structuredContent")
    return {
        "is_error": bool(wire.get("isError")),
        "texts": [block["text"] for block in wire.get("content", []) if block.get("type") == "text"],
        "structured": json.dumps(structured, indent=2, ensure_ascii=False)
        if structured is not None
        else None,
        "meta": json.dumps(wire["_meta"], indent=2) if wire.get("_meta") else None,
    }


@tenant_page(admin=True)
def play(request: HttpRequest, page: TenantPage, app: str) -> HttpResponse:
    caller = caller_for(page.tenant, request.user)
    listing = {entry["name"]: entry for entry in tools_list(page.tenant, caller).tools}
    names = [
        e.wire_name for e in catalog_for(page.tenant).entries if e.app_name == app and e.wire_name in listing
    ]
    if not App.objects.for_tenant(page.tenant).filter(name=app).exists():
        raise ConsoleNotFound()
    chosen = request.POST.get("tool") or request.GET.get("tool") or (names[0] if names else "")
    if chosen and chosen not in names:
        raise ConsoleNotFound()
    context: dict = {"app_name": app, "names": names, "chosen": chosen}
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
            context |= _run(request, page, caller, app, chosen, playground.arguments_of(fields))
            status = context.pop("status", 200)
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
