"""Members and roles: add, change, remove (``tenants.actions``; removal revokes the member's tokens)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.forms import MemberAddForm, MemberUpdateForm, add_action_error
from console.pages import render_page
from tenants import actions
from tenants.exceptions import NotAMember, TenantError
from tenants.models import Membership


def _members_page(
    request: HttpRequest, page: TenantPage, *, add_form=None, errors: list[str] = (), status: int = 200
) -> HttpResponse:
    members = Membership.objects.for_tenant(page.tenant).select_related("user").order_by("user__username")
    context = {"members": members, "add_form": add_form or MemberAddForm(), "errors": errors}
    return render_page(request, page, "members.html", context, current="console:members", status=status)


@tenant_page(admin=True)
def members(request: HttpRequest, page: TenantPage) -> HttpResponse:
    return _members_page(request, page)


@require_POST
@tenant_page(admin=True)
def add_member(request: HttpRequest, page: TenantPage) -> HttpResponse:
    form = MemberAddForm(request.POST)
    if form.is_valid():
        username = form.cleaned_data["username"]
        try:
            actions.add_member(
                page.tenant,
                username,
                roles=form.role_list(),
                admin=form.cleaned_data["admin"],
                acting_user=request.user,
            )
        except TenantError as err:
            add_action_error(form, err)
        else:
            roles = ", ".join(form.role_list()) or "none"
            messages.success(request, f"{username} is a member with roles: {roles}.")
            return redirect("console:members", slug=page.tenant.slug)
    return _members_page(request, page, add_form=form, status=400)


@require_POST
@tenant_page(admin=True)
def update_member(request: HttpRequest, page: TenantPage, username: str) -> HttpResponse:
    form = MemberUpdateForm(request.POST)
    if form.is_valid():
        try:
            actions.update_member(
                page.tenant,
                username,
                roles=form.role_list(),
                admin=form.cleaned_data["admin"],
                acting_user=request.user,
            )
        except NotAMember as err:
            raise ConsoleNotFound() from err
        except TenantError as err:
            return _members_page(request, page, errors=[f"{username}: {err}"], status=400)
        messages.success(request, f"Saved {username}.")
        return redirect("console:members", slug=page.tenant.slug)
    errors = [f"{username}: {field}: {' '.join(msgs)}" for field, msgs in form.errors.items()]
    return _members_page(request, page, errors=errors, status=400)


@require_POST
@tenant_page(admin=True)
def remove_member(request: HttpRequest, page: TenantPage, username: str) -> HttpResponse:
    try:
        actions.remove_member(page.tenant, username, acting_user=request.user)
    except NotAMember as err:
        raise ConsoleNotFound() from err
    messages.success(request, f"Removed {username}; their tokens in this tenant are revoked.")
    return redirect("console:members", slug=page.tenant.slug)
