"""Resource URIs of apps: the one place of the rule that makes them.

An app's resource lives at ``<app scheme>://<uri>``: the scheme is the app's name with ``_``
written ``-`` (a URI scheme takes no underscore; an app name takes no ``-``, so two apps never
share one), and ``<uri>`` is the manifest's ``uri`` (default: the resource's name, then one
``{variable}`` segment per path parameter of its route, or ``{record_id}`` for a collection).
App names are unique in a tenant, so no app can take, or shadow, another app's URIs, and a URI
stays the same across deploys. An app whose scheme is a well-known one (``RESERVED_SCHEMES``:
clients would fetch ``https://`` themselves, ``ui://`` is MCP Apps' screens) serves no resources.

A ``<uri>`` with ``{variable}`` segments is an RFC 6570 level-1 template: each expression is a whole
path segment, expanded with its value percent-encoded (so a value never spans segments), and a
read URI is matched segment by segment, each value percent-decoded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

RESERVED_SCHEMES = frozenset(
    {
        "http",
        "https",
        "ws",
        "wss",
        "file",
        "ftp",
        "data",
        "blob",
        "about",
        "javascript",
        "mailto",
        "ui",
        "urn",
    }
)
_VARIABLE = re.compile(r"^\{([a-z_][a-z0-9_]*)\}$")
RECORD_VARIABLE = "record_id"
# A read URI longer than this matches nothing: it bounds the work of matching a hostile URI.
MAX_URI_LENGTH = 2000


def scheme(app_name: str) -> str:
    """The URI scheme of an app's resources."""
    return app_name.replace("_", "-")


def app_uri(app_name: str, path: str, fixed_scheme: str | None = None) -> str:
    """The absolute URI (or URI template) of ``path`` in app ``app_name``: ``<app scheme>://<path>``,
    or ``<fixed_scheme>://<app name>/<path>`` for a scheme shared by every app (``ui://`` screens)."""
    if fixed_scheme is not None:
        return f"{fixed_scheme}://{app_name}/{path}"
    return f"{scheme(app_name)}://{path}"


def app_of(uri: str) -> str | None:
    """The app name a URI's scheme names (schemes are case-insensitive), or None."""
    found, sep, _ = uri.partition("://")
    return found.lower().replace("-", "_") if sep and found else None


def variables(path: str) -> tuple[str, ...]:
    """The ``{variable}`` names of a URI path, in order."""
    return tuple(m.group(1) for seg in path.split("/") if (m := _VARIABLE.match(seg)))


def default_path(name: str, params: tuple[str, ...]) -> str:
    """The default ``uri`` of a resource: its name, then a segment per variable."""
    return "/".join([name, *(f"{{{p}}}" for p in params)])


def _has_prefix(uri: str, prefix: str) -> bool:
    """Whether ``uri`` starts with ``prefix``, its scheme compared without case (RFC 3986)."""
    found, sep, rest = uri.partition("://")
    wanted, _, wanted_rest = prefix.partition("://")
    return bool(sep) and found.lower() == wanted and rest.startswith(wanted_rest)


@dataclass(frozen=True)
class UriPattern:
    """A URI path of an app compiled for matching read URIs."""

    app_name: str
    path: str
    segments: tuple[str, ...]
    names: tuple[str | None, ...]  # the variable of each segment, None for a literal
    scheme: str | None = None  # None: the app's own scheme; "ui": ui://<app>/<path> (MCP Apps screens)

    @classmethod
    def compile(cls, app_name: str, path: str, scheme: str | None = None) -> UriPattern:
        segments = tuple(path.split("/"))
        names = tuple(m.group(1) if (m := _VARIABLE.match(seg)) else None for seg in segments)
        return cls(app_name, path, segments, names, scheme)

    @property
    def is_template(self) -> bool:
        return any(self.names)

    @property
    def uri(self) -> str:
        return app_uri(self.app_name, self.path, self.scheme)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` if it is this pattern's URI (or an expansion of it), else None."""
        prefix = app_uri(self.app_name, "", self.scheme)
        if len(uri) > MAX_URI_LENGTH or not _has_prefix(uri, prefix):
            return None
        parts = uri[len(prefix) :].split("/")
        if len(parts) != len(self.segments):
            return None
        found: dict[str, str] = {}
        for part, segment, name in zip(parts, self.segments, self.names, strict=True):
            if name is None:
                if part != segment:
                    return None
            else:
                value = unquote(part)
                if not value:
                    return None
                found[name] = value
        return found
