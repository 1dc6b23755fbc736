"""What both audit APIs share: the cursor page, the filter check and the JSON Lines export.

The tool-call audit (``mcp_gateway.api``) and the audit of what people changed (``tenants.api``)
answer the same shape: ``GET .../audit...`` pages newest first with an opaque ``cursor`` (DRF's
``CursorPagination``: a page never repeats or skips a row while new rows arrive), and
``GET .../export`` streams every matching row oldest first as JSON Lines, in batches, each line
carrying its row's ``metadata.uid``; ``?after=<that uid>`` resumes after it (docs/observability.md).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import Model, QuerySet
from django.http import StreamingHttpResponse
from django_filters import FilterSet
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.renderers import BaseRenderer

# Rows read per query while exporting: one batch in memory at a time.
EXPORT_BATCH = 500
JSON_LINES = "application/jsonl"
M = TypeVar("M", bound=Model)


class JSONLinesRenderer(BaseRenderer):
    """Lets ``Accept: application/jsonl`` through content negotiation; an error still renders as JSON."""

    media_type = JSON_LINES
    format = "jsonl"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return (json.dumps(data, separators=(",", ":")) + "\n").encode()


class AuditPages(CursorPagination):
    """Newest first, ``?limit=`` rows a page (at most 500), ``next``/``previous`` links to follow."""

    ordering = ("-created_at", "-id")
    page_size = 100
    page_size_query_param = "limit"
    max_page_size = 500


def filtered(filter_class: type[FilterSet], params: Any, rows: QuerySet) -> QuerySet:
    """``rows`` narrowed by the filters ``params`` name.

    Raises:
        ValidationError: a filter's value is not valid (400, the problems per filter).
    """
    filters = filter_class(params, queryset=rows)
    if not filters.is_valid():
        raise ValidationError(filters.errors)
    return filters.qs


def export_after(params: Any) -> int:
    """The ``after`` of an export (a line's ``metadata.uid``), 0 for the start.

    Raises:
        ValidationError: not a row uid.
    """
    value = params.get("after", "0")
    if not value.isdigit() or len(value) > 18:
        raise ValidationError({"after": ["the metadata.uid of the last line you read"]})
    return int(value)


def json_lines(
    rows: QuerySet[M], line: Callable[[M], dict[str, Any]], *, after: int
) -> StreamingHttpResponse:
    """Rows with an id past ``after``, oldest first, one JSON object a line.

    At most ``AUDIT_EXPORT_MAX_ROWS`` rows a response (a caller resumes with the last line's uid),
    read ``EXPORT_BATCH`` at a time, so neither the database nor memory holds more than a batch.
    """
    limit = settings.AUDIT_EXPORT_MAX_ROWS
    ordered = rows.order_by("id")

    def batch(start: int, size: int) -> tuple[int, list[str]]:
        found = list(ordered.filter(id__gt=start)[:size])
        text = [json.dumps(line(row), separators=(",", ":"), ensure_ascii=False) + "\n" for row in found]
        return (found[-1].pk if found else start), text

    async def lines() -> AsyncIterator[str]:
        start, sent = after, 0
        while sent < limit:
            size = min(EXPORT_BATCH, limit - sent)
            start, text = await sync_to_async(batch)(start, size)
            for item in text:
                yield item
            sent += len(text)
            if len(text) < size:
                return

    response = StreamingHttpResponse(lines(), content_type=JSON_LINES)
    response["Cache-Control"] = "no-store"
    return response
