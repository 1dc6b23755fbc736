"""Django admin: every tenant's OAuth connections, revoked through the same action as the API."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from oauth.connections import REASON_USER, revoke_connection
from oauth.models import Connection
from tenants.admin import ReadOnlyAdmin


@admin.register(Connection)
class ConnectionAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "tenant",
        "user",
        "application",
        "read_only",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["tenant", "read_only"]
    list_select_related = ["tenant", "user", "application"]
    search_fields = ["user__username", "application__client_id", "application__name"]
    readonly_fields = ["token_family"]
    actions = ["revoke"]

    @admin.action(description="Revoke the selected connections (their tokens end at once)")
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> None:
        rows = list(queryset.select_related("application", "user").filter(revoked_at__isnull=True))
        for connection in rows:
            revoke_connection(connection, acting_user=request.user, reason=REASON_USER)
        self.message_user(request, f"Revoked {len(rows)} connection(s).", messages.SUCCESS)
