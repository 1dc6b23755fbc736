"""The one builder of ``WWW-Authenticate: Bearer ...`` values (RFC 6750 section 3, RFC 9728 section 5.1).

Every 401 of the platform names its scheme through it: the REST API, the apps' front-end path, the
problem bodies' default and the MCP endpoint, whose challenge also points at its protected-resource
metadata.
"""

from __future__ import annotations


def bearer_challenge(
    *,
    realm: str | None = None,
    error: str | None = None,
    error_description: str | None = None,
    scope: str | None = None,
    resource_metadata: str | None = None,
) -> str:
    """``Bearer`` with the given auth-params, each a quoted string, in a fixed order."""
    params = {
        "realm": realm,
        "error": error,
        "error_description": error_description,
        "scope": scope,
        "resource_metadata": resource_metadata,
    }
    given = ", ".join(f"{name}={_quoted(value)}" for name, value in params.items() if value is not None)
    return f"Bearer {given}" if given else "Bearer"


def _quoted(value: str) -> str:
    # RFC 9110 quoted-string: a backslash or a double quote inside is escaped.
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
