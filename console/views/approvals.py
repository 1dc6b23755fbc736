"""Approvals: the calls of confirm tools waiting for a person's decision (asked out of band, by a
client that cannot ask); the caller sees theirs, whoever may decide sees those they may decide.

Listing and deciding go through ``mcp_gateway.tools.call.approvals``, as the approvals API does.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.pages import render_page
from mcp_gateway.tools.call import approvals as policy


@tenant_page(admin=False)
def approvals(request: HttpRequest, page: TenantPage) -> HttpResponse:
    rows = policy.pending_for(page.tenant, request.user)
    return render_page(request, page, "approvals.html", {"rows": rows}, current="console:approvals")


@tenant_page(admin=False)
def approval(request: HttpRequest, page: TenantPage, approval_id: str) -> HttpResponse:
    try:
        found = policy.access_approval(page.tenant, approval_id, request.user)
    except policy.ApprovalNotFound as err:
        raise ConsoleNotFound() from err
    context = {"approval": found, "four_eyes": policy.four_eyes(found.approvers)}
    return render_page(request, page, "approval.html", context, current="console:approvals")


@require_POST
@tenant_page(admin=False)
def decide(request: HttpRequest, page: TenantPage, approval_id: str) -> HttpResponse:
    approve = request.POST.get("decision") == "approve"
    try:
        policy.decide(page.tenant, approval_id, request.user, approve)
    except policy.ApprovalNotFound as err:
        raise ConsoleNotFound() from err
    except policy.ApprovalRefused as err:
        messages.error(request, str(err))
    else:
        messages.success(
            request,
            "Approved: the same call, made again, runs once."
            if approve
            else "Denied: the call will not run.",
        )
    return redirect("console:approval", slug=page.tenant.slug, approval_id=approval_id)
