"""Records of app collections, always read and written as a caller with their permissions."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.db.models import Count, F, Max, OrderBy, QuerySet
from django.db.models.fields.json import KeyTransform
from django.utils import timezone
from ulid import ULID

from apps_runtime import record_quota
from apps_runtime.compiled import Collection, CompiledVersion
from apps_runtime.exceptions import PermissionDenied, RecordInvalid, RecordNotFound, RuntimeDomainError
from apps_runtime.heavy_reads import heavy_read
from apps_runtime.json_values import is_text, value_problem
from apps_runtime.models import Record
from tenants.callers import Caller
from tenants.lookups import PreparedLookup, attnames, instance

MAX_LIMIT = 200
# A field name in ``where`` and ``order_by``: letters, digits and single underscores, a letter first
# (after at most one leading underscore). Without "__" a name can never reach Django's lookup syntax,
# and without a leading digit it is never read as an array index. No lookarounds, so JSON Schema
# engines (ECMA, RE2) read the built-in tools' copy of it the same way.
FIELD_NAME_PATTERN = r"^_?[A-Za-z](?:_?[A-Za-z0-9])*_?$"
FIELD_NAME_MAX_LENGTH = 64
WHERE_VALUE_MAX_CHARS = 1000
CURSOR_MAX_CHARS = 512
_FIELD_NAME = re.compile(FIELD_NAME_PATTERN)
_FIELD_RULE = f"letters, digits and single underscores, at most {FIELD_NAME_MAX_LENGTH} characters; no '__'"
_META_ORDER = {"id": "record_id", "created_at": "created_at", "updated_at": "updated_at"}
_CURSOR_SALT = "apps_runtime.records.cursor"


@dataclass(frozen=True)
class RecordsScope:
    """The capability a handler run holds: one tenant, one app, one caller. Nothing else reachable."""

    tenant_id: int
    app_id: int
    compiled: CompiledVersion
    caller: Caller


def serialize(record: Record) -> dict[str, Any]:
    return {
        "id": record.record_id,
        "data": record.data,
        "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
        "created_by": record.created_by,
        "updated_by": record.updated_by,
    }


def _collection(scope: RecordsScope, name: Any, *, write: bool) -> Collection:
    collection = scope.compiled.collections.get(name) if isinstance(name, str) else None
    if collection is None:
        raise RecordNotFound(f"unknown collection '{name}'")
    if write and scope.caller.read_only:
        raise PermissionDenied("this token is read-only")
    rule = collection.write if write else collection.read
    if not rule.allows(scope.caller):
        verb = "write" if write else "read"
        raise PermissionDenied(f"you may not {verb} collection '{collection.name}'")
    return collection


def _usable(data: Any) -> Any:
    """``data``, unless it holds what no database can store or no consumer can walk.

    Checked first: measuring or validating such data is what would fail.
    """
    unusable = value_problem(data)
    if unusable is not None:
        raise RecordInvalid([unusable])
    return data


def _validate(collection: Collection, data: Any) -> dict:
    if not isinstance(data, dict):
        raise RecordInvalid(["/: record data must be a JSON object"])
    problems = [
        f"/{'/'.join(str(p) for p in error.absolute_path)}: {error.message}"
        for error in collection.validator.iter_errors(data)
    ]
    if problems:
        raise RecordInvalid(sorted(problems))
    return data


def _rows(scope: RecordsScope, collection: Collection):
    return Record.objects.for_tenant(scope.tenant_id).filter(app_id=scope.app_id, collection=collection.name)


@functools.cache
def _record_lookup() -> PreparedLookup:
    # records_get is a hot built-in tool (issue 11): its read is compiled once per thread.
    return PreparedLookup(
        lambda tenant_id, app_id, collection, record_id: Record.objects.for_tenant(tenant_id).filter(
            app_id=app_id, collection=collection, record_id=record_id
        ),
        attnames(Record),
        key_types=(int, int, str, str),
    )


def _get_row(scope: RecordsScope, collection: Collection, record_id: Any, *, lock: bool = False) -> Record:
    # A lone surrogate cannot be sent to the database: no record can have such an id.
    usable = isinstance(record_id, str | int) and record_id and is_text(str(record_id))
    row = None
    if usable and lock:
        row = _rows(scope, collection).select_for_update().filter(record_id=str(record_id)).first()
    elif usable:
        found = _record_lookup().row(scope.tenant_id, scope.app_id, collection.name, str(record_id))
        row = instance(Record, found) if found is not None else None
    if row is None:
        raise RecordNotFound(f"no record '{record_id}' in '{collection.name}'")
    return row


def get_record(scope: RecordsScope, collection: str, record_id: str) -> dict:
    """One record.

    Raises:
        RecordNotFound: no such record or collection.
        PermissionDenied: the caller may not read the collection.
    """
    found = _collection(scope, collection, write=False)
    return serialize(_get_row(scope, found, record_id))


def record_ids(scope: RecordsScope, collection: str, prefix: str, limit: int) -> list[str]:
    """Up to ``limit`` ids of the collection's records starting with ``prefix``, in id order
    (completion of a record URI).

    Raises:
        RecordNotFound: no such collection.
        PermissionDenied: the caller may not read the collection.
    """
    found = _collection(scope, collection, write=False)
    rows = _rows(scope, found)
    if prefix:
        rows = rows.filter(record_id__startswith=prefix)
    return list(rows.order_by("record_id").values_list("record_id", flat=True)[:limit])


def change_marker(
    tenant_id: int, app_name: str, collection: str | None = None, record_id: str | None = None
) -> tuple:
    """What changes when records of an app change: of one record (its update time, None when gone),
    or of all the app's records (their count and latest update). One aggregate query.

    Used to tell subscribers that a record- or route-backed resource changed; it checks no caller.
    """
    rows = Record.objects.for_tenant(tenant_id).filter(app__name=app_name, app__tenant_id=tenant_id)
    if record_id is not None:
        found = (
            rows.filter(collection=collection, record_id=record_id)
            .values_list("updated_at", flat=True)
            .first()
        )
        return (found,)
    summary = rows.aggregate(count=Count("pk"), latest=Max("updated_at"))
    return (summary["count"], summary["latest"])


def query_records(
    scope: RecordsScope,
    collection: str,
    *,
    where: dict | None = None,
    order_by: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
    max_bytes: int | None = None,
) -> dict:
    """A page of records matching equality filters, with an opaque cursor for the next page.

    The page ends early when its records' data would pass ``max_bytes`` (a first record over it is
    refused): sizes are read first, and only the records that fit are loaded, so a page of large
    records never costs more memory than its caller can send on (an output budget, a response
    limit). The cursor then continues after the last record returned.

    Raises:
        RecordNotFound: no such collection.
        PermissionDenied: the caller may not read the collection.
        RuntimeDomainError: filters, ordering, limit or cursor outside ``check_query``'s rules.
        HeavyReadsBusy: the page is large and the tenant already runs its share of large reads.
    """
    found = _collection(scope, collection, write=False)
    check_query(where, order_by, limit)
    where = where or {}
    query_key = _query_key(collection, where, order_by)
    offset = _read_cursor(cursor, query_key)
    rows = _filtered(_rows(scope, found), where).order_by(*_ordering(order_by))
    window = _sizes(rows, offset, limit + 1, max_bytes)
    if window and max_bytes is not None and window[0][1] > max_bytes:
        # Not even one record fits what the caller can send on: refused before its data is read.
        raise RuntimeDomainError(
            f"the next matching record is {window[0][1]} bytes of data, over the {max_bytes} bytes this "
            "answer may hold: read it through an app route, or ask for other records"
        )
    keys, size = _fitting(window[:limit], max_bytes)
    with heavy_read(scope.tenant_id, size):
        loaded = {row.pk: row for row in Record.objects.for_tenant(scope.tenant_id).filter(pk__in=keys)}
    page = [loaded[pk] for pk in keys if pk in loaded]  # a record deleted meanwhile is skipped
    next_cursor = None
    if len(window) > len(keys):
        next_cursor = signing.dumps({"o": offset + len(keys), "q": query_key}, salt=_CURSOR_SALT)
    return {"items": [serialize(r) for r in page], "next_cursor": next_cursor}


def _sizes(rows: QuerySet, offset: int, count: int, max_bytes: int | None) -> list[tuple[int, int]]:
    """(key, data bytes) of up to ``count`` rows from ``offset``, read in batches that stop once
    ``max_bytes`` is passed. On SQLite a row's later columns sit past its data's overflow pages, so
    even reading sizes walks every row's data: the first batch is what surely fits at the largest
    record size, each next one what the sizes seen so far say may fit, so a page of large records
    reads one or two rows, and a page of small ones two batches."""
    sized = rows.values_list("pk", "size_bytes")
    if max_bytes is None:
        return list(sized[offset : offset + count])
    found: list[tuple[int, int]] = []
    used = 0
    want = max(1, max_bytes // settings.RECORDS_MAX_RECORD_BYTES)
    while len(found) < count and used <= max_bytes:
        want = min(want, count - len(found))
        start = offset + len(found)
        chunk = list(sized[start : start + want])
        found += chunk
        used += sum(size for _, size in chunk)
        if len(chunk) < want:
            break
        average = max(1, used // len(found))
        want = (max_bytes - used) // average + 1  # one past what may fit, to know where the page ends
    return found


def _fitting(window: list[tuple[int, int]], max_bytes: int | None) -> tuple[list[int], int]:
    """The keys of the leading records whose data fits ``max_bytes`` (the first always), and their size."""
    keys, used = [], 0
    for pk, size in window:
        if keys and max_bytes is not None and used + size > max_bytes:
            break
        keys.append(pk)
        used += size
    return keys, used


def check_query(where: Any, order_by: Any, limit: Any) -> None:
    """The one rule for a query's shape, on every path (built-in tools, handlers, front-end).

    ``where`` maps at most ``RECORDS_QUERY_MAX_WHERE_KEYS`` plain field names to exact scalar values;
    ``order_by`` is one plain field name, optionally with a leading ``-``; ``limit`` is 1 to
    ``MAX_LIMIT``. Plain names keep Django lookups (``client_name__regex``) out, and the key bound
    keeps the query's cost linear and small.

    Raises:
        RuntimeDomainError: the first part of the query that breaks the rule, named.
    """
    if where is not None:
        if not isinstance(where, dict):
            raise RuntimeDomainError("where must be an object of field names to exact values")
        most = settings.RECORDS_QUERY_MAX_WHERE_KEYS
        if len(where) > most:
            raise RuntimeDomainError(f"where has {len(where)} fields; at most {most} are allowed")
        for field, value in where.items():
            _check_field(field, "where")
            _check_where_value(field, value)
    if order_by is not None:
        if not isinstance(order_by, str):
            raise RuntimeDomainError("order_by must be a field name, optionally with a leading '-'")
        _check_field(order_by.removeprefix("-"), "order_by")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise RuntimeDomainError(f"limit must be an integer from 1 to {MAX_LIMIT}")


def _check_field(name: Any, part: str) -> None:
    if not isinstance(name, str) or len(name) > FIELD_NAME_MAX_LENGTH or not _FIELD_NAME.fullmatch(name):
        # The common mistake is a Django-style lookup (qty__gt): say what filters can do.
        why = "filters are exact matches on field names" if part == "where" else "order by one field name"
        raise RuntimeDomainError(f"{part}: {_shown(name)} is not a plain field name: {why} ({_FIELD_RULE})")


def _check_where_value(field: str, value: Any) -> None:
    if not isinstance(value, str | int | float | bool | None):
        raise RuntimeDomainError(
            f"where: the value of '{field}' must be an exact value (string, number, boolean or null)"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise RuntimeDomainError(f"where: the value of '{field}' must be a finite number")
    if isinstance(value, str) and len(value) > WHERE_VALUE_MAX_CHARS:
        raise RuntimeDomainError(
            f"where: the value of '{field}' is longer than {WHERE_VALUE_MAX_CHARS} characters"
        )
    if isinstance(value, str) and ("\x00" in value or not is_text(value)):
        raise RuntimeDomainError(f"where: the value of '{field}' is not text a record can hold")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _filtered(rows: QuerySet, where: dict) -> QuerySet:
    # An explicit key transform, never a "data__<field>" string: a field named "regex" or "contains"
    # stays a JSON key and cannot turn into a lookup on the whole column.
    for index, (field, value) in enumerate(where.items()):
        alias = f"where_{index}"
        rows = rows.alias(**{alias: KeyTransform(field, "data")}).filter(**{alias: value})
    return rows


def _ordering(order_by: str | None) -> list[OrderBy]:
    if order_by is None:
        return [F("record_id").asc()]
    desc, field = order_by.startswith("-"), order_by.removeprefix("-")
    column = F(_META_ORDER[field]) if field in _META_ORDER else KeyTransform(field, "data")
    tie = F("record_id")
    return [column.desc(), tie.desc()] if desc else [column.asc(), tie.asc()]


def _query_key(collection: str, where: dict, order_by: str | None) -> str:
    # The cursor carries a digest of its query, not the query: its size stays fixed however large
    # the filters are.
    canonical = json.dumps([collection, where, order_by], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _read_cursor(cursor: Any, query_key: str) -> int:
    if cursor is None:
        return 0
    if not isinstance(cursor, str) or len(cursor) > CURSOR_MAX_CHARS:
        raise RuntimeDomainError("cursor is not valid")
    try:
        payload = signing.loads(cursor, salt=_CURSOR_SALT)
    except signing.BadSignature as err:
        raise RuntimeDomainError("cursor is not valid") from err
    if not isinstance(payload, dict) or payload.get("q") != query_key:
        raise RuntimeDomainError("cursor belongs to another query")
    return int(payload["o"])


def create_record(scope: RecordsScope, collection: str, data: Any) -> dict:
    """Create a record as the caller.

    Raises:
        RecordNotFound: no such collection.
        PermissionDenied: the caller may not write the collection.
        RecordInvalid: the data breaks the collection's schema.
        RecordLimitExceeded: the record is over the size limit, or the tenant's quota is reached.
    """
    found = _collection(scope, collection, write=True)
    size = record_quota.checked_size(_usable(data))
    clean = _validate(found, data)
    who = scope.caller.username or ""
    with transaction.atomic():
        record_quota.reserve(scope.tenant_id, size)
        row = Record.objects.create(
            tenant_id=scope.tenant_id,
            app_id=scope.app_id,
            collection=found.name,
            record_id=str(ULID()),
            data=clean,
            size_bytes=size,
            created_by=who,
            updated_by=who,
        )
    return serialize(row)


def update_record(scope: RecordsScope, collection: str, record_id: str, data: Any) -> dict:
    """Merge ``data`` into a record as the caller.

    Raises:
        RecordNotFound: no such record or collection.
        PermissionDenied: the caller may not write the collection.
        RecordInvalid: the merged data breaks the collection's schema.
        RecordLimitExceeded: the merged record is over the size limit, or it grows past the quota.
    """
    found = _collection(scope, collection, write=True)
    if not isinstance(data, dict):
        raise RecordInvalid(["/: update data must be a JSON object"])
    with transaction.atomic():
        row = _get_row(scope, found, record_id, lock=True)
        merged = {**row.data, **data}
        size = record_quota.checked_size(_usable(merged))
        row.data = _validate(found, merged)
        record_quota.reserve(scope.tenant_id, size - row.size_bytes)
        row.size_bytes = size
        row.updated_by = scope.caller.username or ""
        row.updated_at = timezone.now()
        row.save(update_fields=["data", "size_bytes", "updated_by", "updated_at"])
    return serialize(row)


def delete_record(scope: RecordsScope, collection: str, record_id: str) -> dict:
    """Delete a record as the caller.

    Raises:
        RecordNotFound: no such record or collection.
        PermissionDenied: the caller may not write the collection.
    """
    found = _collection(scope, collection, write=True)
    with transaction.atomic():
        row = _get_row(scope, found, record_id, lock=True)
        row.delete()
        record_quota.release(scope.tenant_id, row.size_bytes)
    return {"deleted": True, "id": record_id}


def collection_names(scope: RecordsScope) -> list[str]:
    """The collections of the app the caller may read."""
    return sorted(name for name, c in scope.compiled.collections.items() if c.read.allows(scope.caller))
