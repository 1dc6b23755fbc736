"""Wire names: the names tools carry on the MCP wire, and the one place of the rule that makes them.

An app tool is ``<tenant prefix>_<app name>_<tool name>``; a built-in tool is ``<prefix>_<builtin>``.
Clients reject names over 64 characters (and prepend their own prefixes), so the limit is a platform
setting. A name longer than the limit keeps its first ``limit - 9`` characters, then ``_`` and the first
8 hex digits of the SHA-256 of the *full* name: exactly ``limit`` characters, deterministic, and
stable across deploys, so two long names sharing a start still differ.
"""

import hashlib
from typing import TYPE_CHECKING

from django.conf import settings

if TYPE_CHECKING:
    from tenants.models import Tenant

BUILTIN_TOOLS = (
    "collections_list",
    "records_query",
    "records_get",
    "records_create",
    "records_update",
    "records_delete",
    "search_tools",
    "run_code",
)

HASH_DIGITS = 8
# The smallest limit that keeps at least one character of the name before "_<hash>".
MIN_LIMIT = HASH_DIGITS + 2


def wire_name(prefix: str, app: str, tool: str, *, limit: int) -> str:
    """Return the wire name of tool ``tool`` of app ``app`` for the tenant with ``prefix``.

    Raises:
        ValueError: ``limit`` is below ``MIN_LIMIT``.
    """
    return fit_to_limit(f"{prefix}_{app}_{tool}", limit=limit)


def tenant_wire_name(tenant: "Tenant", app: str, name: str) -> str:
    """The wire name of ``name`` (a tool, prompt or resource) of ``app`` in ``tenant``, under the
    platform's limit (``MCP_WIRE_NAME_LIMIT``)."""
    return wire_name(tenant.mcp_prefix, app, name, limit=settings.MCP_WIRE_NAME_LIMIT)


def builtin_wire_name(prefix: str, builtin: str, *, limit: int) -> str:
    """Return the wire name of built-in tool ``builtin`` (one of ``BUILTIN_TOOLS``) for ``prefix``.

    Raises:
        ValueError: ``limit`` is below ``MIN_LIMIT``.
    """
    return fit_to_limit(f"{prefix}_{builtin}", limit=limit)


def fit_to_limit(full: str, *, limit: int) -> str:
    """Return ``full`` unchanged if it fits in ``limit`` characters, else its hashed short form.

    Raises:
        ValueError: ``limit`` is below ``MIN_LIMIT``.
    """
    if limit < MIN_LIMIT:
        raise ValueError(f"wire-name limit {limit} is below the minimum of {MIN_LIMIT}")
    if len(full) <= limit:
        return full
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:HASH_DIGITS]
    return f"{full[: limit - HASH_DIGITS - 1]}_{digest}"
