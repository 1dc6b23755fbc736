"""The manifest's ``egress`` entries: what they mean and whether a URL matches one.

``host`` (``api.example.com``) and ``*.domain`` (exactly one more label) allow https on port 443;
``scheme://host[:port]`` allows that scheme on that port (the scheme's default when left out), the
only way to allow plain http or another port.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

DEFAULT_PORTS = {"http": 80, "https": 443}
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_HOSTNAME = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_WITH_SCHEME = re.compile(r"(?P<scheme>[a-z]+)://(?P<host>\[[0-9a-f:.]+\]|[^:/\[\]]+)(:(?P<port>\d{1,5}))?/?")


@dataclass(frozen=True)
class EgressRule:
    """One allowed destination: ``host`` exact, or any one label under ``suffix`` (a ``*.`` entry)."""

    entry: str
    scheme: str
    port: int
    host: str = ""
    suffix: str = ""

    def allows(self, scheme: str, host: str, port: int) -> bool:
        if scheme != self.scheme or port != self.port:
            return False
        if self.suffix:
            label, dot, rest = host.partition(".")
            return bool(dot) and bool(label) and rest == self.suffix
        return host == self.host


class BadEntry(ValueError):
    """An ``egress`` entry that is none of the three forms."""


def _check_host(host: str, entry: str) -> str:
    host = host.lower()
    if host.startswith("[") and host.endswith("]"):
        try:
            return str(ipaddress.IPv6Address(host[1:-1]))
        except ValueError as err:
            raise BadEntry(f"{entry!r}: {host} is not an IPv6 address") from err
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    if not _HOSTNAME.fullmatch(host) or "." not in host and host != "localhost":
        raise BadEntry(f"{entry!r}: {host!r} is not a host name like api.example.com")
    return host


def parse_rule(entry: str) -> EgressRule:
    """Raises: BadEntry: not ``host``, ``*.domain`` or ``scheme://host[:port]``."""
    if not isinstance(entry, str) or not entry or len(entry) > 300:
        raise BadEntry("an egress entry is a non-empty string of at most 300 characters")
    if "://" in entry:
        match = _WITH_SCHEME.fullmatch(entry.lower())
        if match is None:
            raise BadEntry(f"{entry!r}: write scheme://host or scheme://host:port, with no path")
        scheme = match["scheme"]
        if scheme not in DEFAULT_PORTS:
            raise BadEntry(f"{entry!r}: the scheme is http or https")
        port = int(match["port"]) if match["port"] else DEFAULT_PORTS[scheme]
        if not 1 <= port <= 65535:
            raise BadEntry(f"{entry!r}: the port is 1 to 65535")
        return EgressRule(entry, scheme, port, host=_check_host(match["host"], entry))
    if entry.startswith("*."):
        if "." not in entry[2:]:
            raise BadEntry(f"{entry!r}: a wildcard covers one label under a domain, like *.example.com")
        suffix = _check_host(entry[2:], entry)
        return EgressRule(entry, "https", 443, suffix=suffix)
    if "*" in entry:
        raise BadEntry(f"{entry!r}: only a leading '*.' is a wildcard (one label)")
    return EgressRule(entry, "https", 443, host=_check_host(entry, entry))


def parse_rules(entries: list | None) -> tuple[EgressRule, ...]:
    """The rules of a manifest the deploy validator accepted (a bad entry is skipped, never widened)."""
    rules = []
    for entry in entries or ():
        try:
            rules.append(parse_rule(entry))
        except BadEntry:
            continue
    return tuple(rules)


def allowed(rules: tuple[EgressRule, ...], scheme: str, host: str, port: int) -> bool:
    return any(rule.allows(scheme, host, port) for rule in rules)
