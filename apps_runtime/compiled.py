"""An app version's manifest compiled once: auth expressions, routes, collection validators."""

from __future__ import annotations

from dataclasses import dataclass, field

from apps_runtime.auth_expr import AuthExpr, parse_auth
from apps_runtime.egress.rules import EgressRule, parse_rules
from apps_runtime.json_schemas import SchemaValidator, compile_schema
from apps_runtime.manifest import defaults
from apps_runtime.models import AppVersion
from apps_runtime.routes import RouteTable
from core.caches import BoundedCache


@dataclass(frozen=True)
class Collection:
    name: str
    read: AuthExpr
    write: AuthExpr
    validator: SchemaValidator


@dataclass(frozen=True)
class CompiledVersion:
    version_id: int
    app_name: str
    number: int
    access: AuthExpr
    routes: RouteTable
    collections: dict[str, Collection]
    # What its handlers may reach (docs/egress.md): destinations, secret names, connections.
    egress: tuple[EgressRule, ...] = ()
    secrets: frozenset[str] = frozenset()
    connections: dict = field(default_factory=dict)


def compile_manifest(version_id: int, number: int, manifest: dict) -> CompiledVersion:
    """Compile a manifest that the deploy validator accepted."""
    collections = {}
    for name, spec in (manifest.get("collections") or {}).items():
        collections[name] = Collection(
            name=name,
            read=parse_auth(defaults.collection_read(spec)),
            write=parse_auth(defaults.collection_write(spec)),
            validator=compile_schema(spec.get("schema") or {"type": "object"}),
        )
    return CompiledVersion(
        version_id=version_id,
        app_name=manifest["name"],
        number=number,
        access=parse_auth(defaults.app_access(manifest)),
        routes=RouteTable(manifest.get("routes") or {}, manifest.get("isolation")),
        collections=collections,
        egress=parse_rules(manifest.get("egress")),
        secrets=frozenset(manifest.get("secrets") or ()),
        connections=dict(manifest.get("connections") or {}),
    )


_cache: BoundedCache[tuple[int, str], CompiledVersion] = BoundedCache(4096)


def compiled_version(version: AppVersion) -> CompiledVersion:
    """The compiled form of ``version``; versions are immutable, so it is cached per process."""
    key = (version.pk, version.content_hash)
    compiled = _cache.get(key)
    if compiled is None:
        compiled = _cache.put(key, compile_manifest(version.pk, version.number, version.manifest))
    return compiled
