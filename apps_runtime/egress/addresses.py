"""Which IP addresses an outbound request may connect to: public ones, and the operator's
``EGRESS_ALLOWED_NETWORKS``. Checked on the address actually connected to, after DNS, on every hop.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_METADATA = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")})


def parse_networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    """Raises: ValueError: one is not a CIDR."""
    return tuple(ipaddress.ip_network(cidr.strip(), strict=False) for cidr in cidrs)


def refusal(address: IPAddress, allowed: tuple[Network, ...]) -> str | None:
    """Why ``address`` may not be connected to, or None when it may."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
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
