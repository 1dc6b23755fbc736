"""The single-row lookups every request makes, compiled to SQL once per thread.

Turning a queryset into SQL costs ten to twenty times what running a unique-key lookup costs
(about 1 ms against 0.05 ms on SQLite), and the gateway makes such lookups on every request: the
tenant of the path, the token of the header, the record ``records_get`` reads. A
``PreparedLookup`` compiles its queryset once per thread (a compiler belongs to its thread's
connection) and afterwards only binds the new keys and applies the same converters the ORM would.
"""

from __future__ import annotations

import functools
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import FilteredRelation, Model, Q, QuerySet
from django.db.models.sql.compiler import SQLCompiler

from tenants.models import ApiToken, Tenant


def _placeholder(kind: type, position: int) -> str | int | uuid.UUID:
    """What key ``position`` is compiled as, then found among the parameters and replaced.

    Each is a value no real key takes (a NUL-framed string, an id below any the database issues,
    a UUID of no version), and of the key's own type, so the field's preparation accepts it.
    """
    if kind is int:
        return -(2**62) - position
    if kind is uuid.UUID:
        return uuid.UUID(int=position + 1)
    return f"\x00lookup-key-{position}\x00"


def _bound_as(params: tuple, placeholder: Any) -> tuple[int, Callable[[Any], Any]]:
    """Where ``placeholder`` is among the compiled parameters, and how a key is written there: as
    it is, or (a UUID on a database without a UUID type) as its hex digits."""
    for index, param in enumerate(params):
        if param == placeholder:
            return index, _as_is
        if isinstance(placeholder, uuid.UUID) and param == placeholder.hex:
            return index, _hex
    raise ValueError(f"the lookup's SQL does not take the key {placeholder!r}")


def _as_is(key: Any) -> Any:
    return key


def _hex(key: uuid.UUID) -> str:
    return key.hex


@dataclass(frozen=True)
class _Compiled:
    compiler: SQLCompiler
    sql: str
    params: tuple
    keys: tuple[tuple[int, Callable[[Any], Any]], ...]  # (position among params, how it is bound)
    # (position, converters, expression) of each column the ORM converts: asked once, not per row.
    converters: tuple[tuple[int, list, Any], ...]


class PreparedLookup:
    """``query(*keys).values_list(*fields).first()``, with the SQL built once per thread.

    ``query`` takes one key per entry of ``key_types`` (a string, an int or a UUID each: a slug, a
    key id, a tenant id, a token family...) and returns a queryset filtered by them; it must not
    order the rows (a lookup by a unique key has one).
    """

    def __init__(
        self,
        query: Callable[..., QuerySet],
        fields: list[str],
        using: str = DEFAULT_DB_ALIAS,
        key_types: tuple[type, ...] = (str,),
    ):
        self._query = query
        self.fields = fields
        self._using = using
        self._key_types = key_types
        self._local = threading.local()

    def row(self, *keys: str | int) -> dict[str, Any] | None:
        """The first row for ``keys`` as ``{field: value}``, converted as the ORM converts it."""
        compiled = self._compiled()
        params = list(compiled.params)
        for (index, bind), key in zip(compiled.keys, keys, strict=True):
            params[index] = bind(key)
        with connections[self._using].cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchmany(1)
        if not rows:
            return None
        values = list(rows[0])
        connection = compiled.compiler.connection
        for position, converters, expression in compiled.converters:
            value = values[position]
            for converter in converters:
                value = converter(value, expression, connection)
            values[position] = value
        return dict(zip(self.fields, values, strict=True))

    def _compiled(self) -> _Compiled:
        compiled = getattr(self._local, "compiled", None)
        if compiled is None:
            placeholders = [_placeholder(kind, n) for n, kind in enumerate(self._key_types)]
            queryset = self._query(*placeholders).order_by().values_list(*self.fields)[:1]
            compiler = queryset.query.get_compiler(using=self._using)
            sql, params = compiler.as_sql()
            bound = tuple(_bound_as(params, placeholder) for placeholder in placeholders)
            columns = [selected[0] for selected in compiler.select[: compiler.col_count]]
            converters = tuple(
                (position, converters, expression)
                for position, (converters, expression) in compiler.get_converters(columns).items()
            )
            compiled = _Compiled(compiler, sql, params, bound, converters)
            self._local.compiled = compiled
        return compiled


def attnames(model: type[Model]) -> list[str]:
    """The model's concrete fields as a ``PreparedLookup`` names them (``tenant_id``, not ``tenant``)."""
    return [field.attname for field in model._meta.concrete_fields]


M = TypeVar("M", bound=Model)


def instance(model: type[M], row: dict[str, Any], prefix: str = "") -> M:
    """A model instance as the ORM would load it, from the fields of ``row`` under ``prefix``."""
    names, positions = _layout(model, tuple(row), prefix)
    values = list(row.values())
    return model.from_db(DEFAULT_DB_ALIAS, names, [values[position] for position in positions])


@functools.lru_cache(maxsize=64)
def _layout(model: type[Model], columns: tuple[str, ...], prefix: str) -> tuple[list[str], list[int]]:
    """The model's fields found among ``columns`` under ``prefix``, in the model's own field order
    (the order ``from_db`` takes), and where each is among the columns."""
    own = {name[len(prefix) :]: n for n, name in enumerate(columns) if name.startswith(prefix)}
    names = [field.attname for field in model._meta.concrete_fields if field.attname in own]
    return names, [own[name] for name in names]


@functools.cache
def _tenant_lookup() -> PreparedLookup:
    return PreparedLookup(lambda slug: Tenant.objects.filter(slug=slug), attnames(Tenant))


def tenant_by_slug(slug: str) -> Tenant | None:
    """The tenant ``slug``, freshly read (its ``state_version`` is current)."""
    row = _tenant_lookup().row(slug)
    return instance(Tenant, row) if row is not None else None


def caller_user_fields() -> list[str]:
    """What a caller is made of: the user's id, username, ``is_active`` and ``is_superuser``."""
    return sorted({"id", "is_active", "is_superuser", get_user_model().USERNAME_FIELD})


@functools.cache
def _token_lookup() -> PreparedLookup:
    return PreparedLookup(
        lambda key_id: ApiToken.all_tenants.filter(key_id=key_id),
        attnames(ApiToken) + [f"user__{name}" for name in caller_user_fields()],
    )


@functools.cache
def _tenant_token_lookup() -> PreparedLookup:
    # The tenant with, joined where it is the tenant's, the token: one statement instead of two
    # (on PostgreSQL one round trip less on every API-token request).
    return PreparedLookup(
        lambda slug, key_id: Tenant.objects.filter(slug=slug).annotate(
            token=FilteredRelation("tokens", condition=Q(tokens__key_id=key_id))
        ),
        attnames(Tenant)
        + [f"token__{name}" for name in attnames(ApiToken)]
        + [f"token__user__{name}" for name in caller_user_fields()],
        key_types=(str, str),
    )


def tenant_with_token(slug: str, key_id: str) -> tuple[Tenant | None, ApiToken | None]:
    """The tenant ``slug`` and its token ``key_id`` (with its user, as ``token_with_user``), freshly
    read in one statement; the token is None when the tenant has no such token."""
    row = _tenant_token_lookup().row(slug, key_id)
    if row is None:
        return None, None
    tenant = instance(Tenant, row)
    if row["token__id"] is None:
        return tenant, None
    token = instance(ApiToken, row, prefix="token__")
    token.user = instance(get_user_model(), row, prefix="token__user__")
    return tenant, token


def token_with_user(key_id: str) -> ApiToken | None:
    """The token row ``key_id`` with the parts of its user a caller is made of, freshly read.

    The user carries only its id, username, ``is_active`` and ``is_superuser``.
    """
    row = _token_lookup().row(key_id)
    if row is None:
        return None
    token = instance(ApiToken, row)
    token.user = instance(get_user_model(), row, prefix="user__")
    return token
