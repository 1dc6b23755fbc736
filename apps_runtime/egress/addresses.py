"""Which IP addresses an outbound request may connect to: public ones, and the operator's
``EGRESS_ALLOWED_NETWORKS``. Checked on the address actually connected to, after DNS, on every hop.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
# IPv6 forms that carry an IPv4 address a gateway or the host's stack may deliver to: NAT64's well-known
# and local-use prefixes (RFC 6052, 8215) and the deprecated IPv4-compatible ::a.b.c.d. Each is judged
# by the IPv4 address it carries (64:ff9b::7f00:1 is 127.0.0.1 behind a NAT64), like ::ffff:a.b.c.d.
_EMBEDDING_V4 = (
    ipaddress.IPv6Network("64:ff9b::/96"),
    ipaddress.IPv6Network("64:ff9b:1::/48"),
    ipaddress.IPv6Network("::/96"),
)
_METADATA = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")})


def parse_networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    """Raises: ValueError: one is not a CIDR."""
    return tuple(ipaddress.ip_network(cidr.strip(), strict=False) for cidr in cidrs)


def _carried_v4(address: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, NAT64, compatible), else itself."""
    if not isinstance(address, ipaddress.IPv6Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in net for net in _EMBEDDING_V4) and int(address) > 1:  # not :: or ::1
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def refusal(address: IPAddress, allowed: tuple[Network, ...]) -> str | None:
    """Why ``address`` may not be connected to, or None when it may."""
    address = _carried_v4(address)
    if any(address.version == net.version and address in net for net in allowed):
        return None
    for kind, hit in (
        ("a cloud metadata address", address in _METADATA),
        ("a loopback address", address.is_loopback),
        ("a link-local address", address.is_link_local),
        ("a carrier-grade NAT address", isinstance(address, ipaddress.IPv4Address) and address in _CGNAT),
        ("a multicast address", address.is_multicast),
        ("an unspecified address", address.is_unspecified),
        ("a private address", address.is_private),
        ("a reserved address", not address.is_global),
    ):
        if hit:
            return kind
    return None
