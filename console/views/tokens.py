"""Tokens: admins issue (the secret is shown once) and revoke; members see their own."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_POST

from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.forms import TokenIssueForm, add_action_error
from console.pages import render_page
from tenants import actions
from tenants.exceptions import TenantError, TokenNotFound
from tenants.models import ApiToken, Membership
from tenants.scoping import access_token


def _tokens_page(
    request: HttpRequest,
    page: TenantPage,
    *,
    form: TokenIssueForm | None = None,
    issued: tuple[ApiToken, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    rows = ApiToken.objects.for_tenant(page.tenant).select_related("user").order_by("-created_at")
    if not page.is_admin:
        rows = rows.filter(user_id=page.user.pk)
    context = {"tokens": rows, "issued": issued}
    if page.is_admin:
        members = Membership.objects.for_tenant(page.tenant).select_related("user").order_by("user__username")
        context["form"] = form or TokenIssueForm(members=list(members))
    response = render_page(request, page, "tokens.html", context, current="console:tokens", status=status)
    if issued:
        add_never_cache_headers(response)  # the secret must not stay in any cache
    return response


@tenant_page(admin=False)
def tokens(request: HttpRequest, page: TenantPage) -> HttpResponse:
    return _tokens_page(request, page)


@require_POST
@tenant_page(admin=True)
def issue_token(request: HttpRequest, page: TenantPage) -> HttpResponse:
    members = Membership.objects.for_tenant(page.tenant).select_related("user").order_by("user__username")
    form = TokenIssueForm(request.POST, members=list(members))
    if form.is_valid():
        data = form.cleaned_data
        try:
            issued = actions.issue_token(
                page.tenant,
                data["username"],
                name=data["name"],
                read_only=data["read_only"],
                expires_days=data["expires_days"],
                apps=[name.strip() for name in data["apps"].split(",") if name.strip()],
                acting_user=request.user,
            )
        except TenantError as err:
            add_action_error(form, err)
        else:
            # Rendered, not redirected: the secret is in this one response and nowhere else.
            return _tokens_page(request, page, issued=issued, status=201)
    return _tokens_page(request, page, form=form, status=400)


@require_POST
@tenant_page(admin=True)
def revoke_token(request: HttpRequest, page: TenantPage, token_id: int) -> HttpResponse:
    try:
        token = access_token(page.tenant, token_id)
    except TokenNotFound as err:
        raise ConsoleNotFound() from err
    actions.revoke_token(token, acting_user=request.user)
    messages.success(request, f"Revoked token {token.name or token.key_id} of {token.user.get_username()}.")
    return redirect("console:tokens", slug=page.tenant.slug)
