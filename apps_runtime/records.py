"""Records of app collections, always read and written as a caller with their permissions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.core import signing
from django.db import transaction
from django.utils import timezone
from ulid import ULID

from apps_runtime.compiled import Collection, CompiledVersion
from apps_runtime.exceptions import PermissionDenied, RecordInvalid, RecordNotFound, RuntimeDomainError
from apps_runtime.models import Record
from tenants.callers import Caller

MAX_LIMIT = 200
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
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


def _get_row(scope: RecordsScope, collection: Collection, record_id: Any) -> Record:
    row = _rows(scope, collection).filter(record_id=str(record_id)).first() if record_id else None
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


def query_records(
    scope: RecordsScope,
    collection: str,
    *,
    where: dict | None = None,
    order_by: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> dict:
    """A page of records matching equality filters, with an opaque cursor for the next page.

    Raises:
        RecordNotFound: no such collection.
        PermissionDenied: the caller may not read the collection.
        RuntimeDomainError: bad filters, ordering, limit or cursor.
    """
    found = _collection(scope, collection, write=False)
    rows = _rows(scope, found)
    for field, value in (where or {}).items():
        if not _FIELD.match(str(field)) or isinstance(value, dict | list):
            raise RuntimeDomainError(f"where: '{field}' must be a field name with a scalar value")
        rows = rows.filter(**{f"data__{field}": value})
    rows = rows.order_by(*_ordering(order_by))
    if not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise RuntimeDomainError(f"limit must be an integer from 1 to {MAX_LIMIT}")
    offset = _read_cursor(cursor, collection, where, order_by)
    page = list(rows[offset : offset + limit + 1])
    next_cursor = None
    if len(page) > limit:
        page = page[:limit]
        next_cursor = signing.dumps(
            {"o": offset + limit, "q": [collection, where or {}, order_by]}, salt=_CURSOR_SALT, compress=True
        )
    return {"items": [serialize(r) for r in page], "next_cursor": next_cursor}


def _ordering(order_by: str | None) -> list[str]:
    if order_by is None:
        return ["record_id"]
    if not isinstance(order_by, str):
        raise RuntimeDomainError("order_by must be a field name, optionally with a leading '-'")
    desc, field = order_by.startswith("-"), order_by.lstrip("-")
    if not _FIELD.match(field):
        raise RuntimeDomainError(f"order_by: '{order_by}' is not a field name")
    column = _META_ORDER.get(field, f"data__{field}")
    sign = "-" if desc else ""
    return [f"{sign}{column}", f"{sign}record_id"]


def _read_cursor(cursor: str | None, collection: str, where: dict | None, order_by: str | None) -> int:
    if cursor is None:
        return 0
    try:
        payload = signing.loads(cursor, salt=_CURSOR_SALT)
    except signing.BadSignature as err:
        raise RuntimeDomainError("cursor is not valid") from err
    if payload.get("q") != [collection, where or {}, order_by]:
        raise RuntimeDomainError("cursor belongs to another query")
    return int(payload["o"])


def create_record(scope: RecordsScope, collection: str, data: Any) -> dict:
    """Create a record as the caller.

    Raises:
        RecordNotFound: no such collection.
        PermissionDenied: the caller may not write the collection.
        RecordInvalid: the data breaks the collection's schema.
    """
    found = _collection(scope, collection, write=True)
    clean = _validate(found, data)
    who = scope.caller.username or ""
    row = Record.objects.create(
        tenant_id=scope.tenant_id,
        app_id=scope.app_id,
        collection=found.name,
        record_id=str(ULID()),
        data=clean,
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
    """
    found = _collection(scope, collection, write=True)
    if not isinstance(data, dict):
        raise RecordInvalid(["/: update data must be a JSON object"])
    with transaction.atomic():
        row = _get_row(scope, found, record_id)
        row = Record.objects.for_tenant(scope.tenant_id).select_for_update().get(pk=row.pk)
        row.data = _validate(found, {**row.data, **data})
        row.updated_by = scope.caller.username or ""
        row.updated_at = timezone.now()
        row.save(update_fields=["data", "updated_by", "updated_at"])
    return serialize(row)


def delete_record(scope: RecordsScope, collection: str, record_id: str) -> dict:
    """Delete a record as the caller.

    Raises:
        RecordNotFound: no such record or collection.
        PermissionDenied: the caller may not write the collection.
    """
    found = _collection(scope, collection, write=True)
    row = _get_row(scope, found, record_id)
    row.delete()
    return {"deleted": True, "id": record_id}


def collection_names(scope: RecordsScope) -> list[str]:
    """The collections of the app the caller may read."""
    return sorted(name for name, c in scope.compiled.collections.items() if c.read.allows(scope.caller))
