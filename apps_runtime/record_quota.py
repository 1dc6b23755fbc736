"""What records cost: a size limit per record and a storage quota per tenant.

A record's size is its data as compact UTF-8 JSON (``Record.size_bytes``). A tenant's total is kept
in one ``RecordUsage`` row that every write moves inside its own transaction, rather than summed on
each write: a sum reads every record of the tenant (measured on PostgreSQL with an index-only scan:
~10 ms at 100k records, ~130 ms at 1M, per write), the counter reads one row.

The conditional ``UPDATE ... WHERE bytes <= quota - size`` is atomic, so concurrent writers never
overshoot the quota together; they queue on the tenant's usage row for the length of their write
transactions. Deletes made outside the records API (the admin, an app deleted in cascade) leave the
counter too high; a refused write then recounts from ``Record.size_bytes`` (at most once per
``RECOUNT_AFTER``), so such drift only ever refuses early and heals itself.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import F, Sum
from django.utils import timezone

from apps_runtime.exceptions import RecordInvalid, RuntimeDomainError
from apps_runtime.models import Record, RecordUsage

RECOUNT_AFTER = timedelta(minutes=1)
# A NUL in any string, as json.dumps escapes it (an odd run of backslashes before "u0000"): PostgreSQL
# refuses it in jsonb, so it is refused here on every database.
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


class RecordLimitExceeded(RuntimeDomainError):
    """A record over the per-record size limit, or a write past the tenant's record storage quota."""

    status, code = 413, "limit"


def record_size(data: Any) -> int:
    """What a record counts against the limits: its data as compact UTF-8 JSON, in bytes.

    Raises:
        RecordInvalid: the data is not JSON that every database stores (no NaN, NUL or lone surrogate).
    """
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        encoded = text.encode("utf-8")
    except (TypeError, ValueError, RecursionError) as err:  # UnicodeEncodeError: a lone surrogate
        raise RecordInvalid(["/: record data must be JSON text (no NaN, no lone surrogates)"]) from err
    if _ESCAPED_NUL.search(text):
        raise RecordInvalid(["/: record data must not contain NUL characters"])
    return len(encoded)


def checked_size(data: Any) -> int:
    """``record_size(data)``, refused past ``RECORDS_MAX_RECORD_BYTES``.

    Call it before schema validation: a huge document is refused for the price of one serialisation.

    Raises:
        RecordInvalid: see ``record_size``.
        RecordLimitExceeded: the record is over the limit.
    """
    size = record_size(data)
    limit = settings.RECORDS_MAX_RECORD_BYTES
    if size > limit:
        raise RecordLimitExceeded(f"record is {_bytes_text(size)}; the limit is {_bytes_text(limit)}")
    return size


def reserve(tenant_id: int, grows_by: int) -> None:
    """Count ``grows_by`` more bytes for the tenant, inside the write's transaction.

    Shrinking (a negative ``grows_by``) always passes, so a tenant over its quota can clean up.

    Raises:
        RecordLimitExceeded: the tenant's records would pass ``RECORDS_TENANT_QUOTA_BYTES``.
    """
    usage = RecordUsage.objects.for_tenant(tenant_id)
    if grows_by <= 0:
        usage.update(bytes=F("bytes") + grows_by)
        return
    quota = settings.RECORDS_TENANT_QUOTA_BYTES
    room = usage.filter(bytes__lte=quota - grows_by)
    if room.update(bytes=F("bytes") + grows_by):
        return
    used = _recount(tenant_id)
    if used + grows_by <= quota and room.update(bytes=F("bytes") + grows_by):
        return
    raise RecordLimitExceeded(
        f"tenant record storage quota of {_bytes_text(quota)} reached "
        f"({_bytes_text(used)} used; this write needs {_bytes_text(grows_by)} more)"
    )


def release(tenant_id: int, size: int) -> None:
    """Count ``size`` bytes less for the tenant (a record deleted), inside the delete's transaction."""
    reserve(tenant_id, -size)


def _recount(tenant_id: int) -> int:
    """The tenant's usage, summed again from its records when the counter is missing or old."""
    row = RecordUsage.objects.for_tenant(tenant_id).select_for_update().first()
    if row is None:
        # A tenant's first write. get_or_create never overwrites: a racing first writer's row (and
        # the bytes it already added) wins, and its record is counted exactly once.
        row, _ = RecordUsage.objects.for_tenant(tenant_id).get_or_create(
            tenant_id=tenant_id, defaults={"bytes": _summed(tenant_id)}
        )
        return row.bytes
    if timezone.now() - row.counted_at < RECOUNT_AFTER:
        return row.bytes
    # The row lock is held: writers that moved the counter have committed, so the sum sees their rows.
    row.bytes, row.counted_at = _summed(tenant_id), timezone.now()
    row.save(update_fields=["bytes", "counted_at"])
    return row.bytes


def _summed(tenant_id: int) -> int:
    return Record.objects.for_tenant(tenant_id).aggregate(total=Sum("size_bytes"))["total"] or 0


def _bytes_text(size: int) -> str:
    """``300 KiB``, ``1.5 MiB``; rounded up, so a size just over a limit never prints as the limit."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            tenths = -(-size * 10 // scale)
            return f"{tenths / 10:g} {unit}"
    return f"{size} bytes"
