"""The filters of the tool-call audit: one FilterSet for the API, its export and the console page."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Q, QuerySet

from mcp_gateway.models import ToolCallAudit

# The console's form shows a date-and-time picker; the API takes any ISO 8601 time.
_PICKER = forms.DateTimeInput(attrs={"type": "datetime-local"})

# The methods an audit row may record (``ToolCallAudit.method``).
METHODS = ("tools/call", "resources/read", "prompts/get", "completion/complete")


class ToolCallFilter(django_filters.FilterSet):
    """``method``, ``outcome``, ``tool``, ``app``, ``member``, ``token`` (its public key id),
    ``connection`` (an OAuth client id), ``agent``, ``run`` (an agent run id), ``since``/``until``,
    ``call`` (a run_code call's ``call_id``: that call and its script's inner calls)."""

    method = django_filters.ChoiceFilter(choices=[(m, m) for m in METHODS])
    outcome = django_filters.ChoiceFilter(choices=ToolCallAudit.Outcome.choices)
    tool = django_filters.CharFilter(field_name="wire_name", max_length=128, label="Tool (wire name)")
    app = django_filters.CharFilter(field_name="app_name", max_length=40)
    member = django_filters.CharFilter(field_name="user__username", max_length=150, label="Member")
    token = django_filters.CharFilter(field_name="token__key_id", max_length=16, label="Token key id")
    connection = django_filters.CharFilter(field_name="oauth_client_id", max_length=255, label="OAuth client")
    agent = django_filters.CharFilter(field_name="agent_name", max_length=40)
    run = django_filters.CharFilter(field_name="agent_run_id", max_length=40, label="Agent run")
    call = django_filters.CharFilter(method="_call", max_length=40, label="run_code call")
    since = django_filters.IsoDateTimeFilter(
        field_name="created_at", lookup_expr="gte", label="From (UTC)", widget=_PICKER
    )
    until = django_filters.IsoDateTimeFilter(
        field_name="created_at", lookup_expr="lte", label="To (UTC)", widget=_PICKER
    )

    class Meta:
        model = ToolCallAudit
        fields: list[str] = []

    def _call(self, rows: QuerySet[ToolCallAudit], _name: str, value: str) -> QuerySet[ToolCallAudit]:
        return rows.filter(Q(call_id=value) | Q(parent_call_id=value))
