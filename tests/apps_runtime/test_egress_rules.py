"""The egress rules and the address rule, as units: what each manifest entry allows, which addresses an
outbound request may connect to, and the settings' checks."""

from __future__ import annotations

import ipaddress

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from apps_runtime.egress.addresses import parse_networks, refusal
from apps_runtime.egress.rules import allowed, parse_rule, parse_rules


@pytest.mark.parametrize(
    ("entry", "scheme", "host", "port", "expected"),
    [
        ("api.example.com", "https", "api.example.com", 443, True),
        ("api.example.com", "http", "api.example.com", 80, False),
        ("api.example.com", "https", "api.example.com", 8443, False),
        ("api.example.com", "https", "x.api.example.com", 443, False),
        ("*.example.org", "https", "a.example.org", 443, True),
        ("*.example.org", "https", "a.b.example.org", 443, False),
        ("*.example.org", "https", "example.org", 443, False),
        ("*.example.org", "https", "evilexample.org", 443, False),
        ("http://127.0.0.1:8700", "http", "127.0.0.1", 8700, True),
        ("http://127.0.0.1:8700", "http", "127.0.0.1", 8701, False),
        ("http://status.example", "http", "status.example", 80, True),
        ("https://[::1]:9000", "https", "::1", 9000, True),
        ("API.Example.com", "https", "api.example.com", 443, True),
    ],
)
def test_what_each_entry_allows(entry, scheme, host, port, expected):
    assert allowed((parse_rule(entry),), scheme, host, port) is expected


def test_bad_entries_are_skipped_never_widened():
    assert parse_rules(["ftp://x.example", "*", "ok.example"]) == (parse_rule("ok.example"),)


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.2", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("192.168.0.1", "a private address"),
        ("172.16.0.1", "a private address"),
        ("fd12::1", "a private address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("169.254.1.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("100.64.0.1", "a carrier-grade NAT address"),
        ("224.0.0.1", "a multicast address"),
        ("0.0.0.0", "an unspecified address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        # IPv6 forms carrying an IPv4 address that a NAT64 gateway or a 6to4 relay delivers to
        ("64:ff9b::7f00:1", "a loopback address"),
        ("64:ff9b::a9fe:a9fe", "a cloud metadata address"),
        ("64:ff9b:1::a00:1", "a private address"),
        ("2002:a9fe:a9fe::1", "a cloud metadata address"),
        ("2002:7f00:1::1", "a loopback address"),
        ("::7f00:1", "a loopback address"),
        ("::", "an unspecified address"),
        ("64:ff9b::5db8:d70e", None),  # a public address behind NAT64 stays reachable
        ("192.0.2.1", "a private address"),  # documentation range: not global
        ("93.184.215.14", None),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", None),
    ],
)
def test_which_addresses_are_refused(address, kind):
    assert refusal(ipaddress.ip_address(address), ()) == kind


def test_an_allowed_network_lets_exactly_its_addresses_through():
    allowed_networks = parse_networks(["127.0.0.1/32"])
    assert refusal(ipaddress.ip_address("127.0.0.1"), allowed_networks) is None
    assert refusal(ipaddress.ip_address("127.0.0.2"), allowed_networks) == "a loopback address"


def test_the_checks_refuse_a_bad_network_and_an_incomplete_provider(settings):
    settings.EGRESS_ALLOWED_NETWORKS = ["not-a-cidr"]
    settings.OUTBOUND_OAUTH_PROVIDERS = {"crm": {"authorize_url": "https://crm.example/a"}}
    with pytest.raises(SystemCheckError) as raised:
        call_command("check")
    assert "EGRESS_ALLOWED_NETWORKS" in str(raised.value)
    assert "OUTBOUND_OAUTH_PROVIDERS['crm'] lacks token_url, client_id" in str(raised.value)
