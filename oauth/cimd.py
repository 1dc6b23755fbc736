"""Fetching client ID metadata documents: the toolkit's SSRF-hardened fetcher, with the platform's rules.

The toolkit resolves the client_id URL's host once, refuses every non-public address, connects to
the address it checked (no DNS rebinding), follows no redirect, and caps time and size. This
fetcher keeps all of that and adds two rules: a loopback host is allowed only when
``OAUTH_CIMD_ALLOW_LOOPBACK`` is on (DEBUG and tests, which serve documents on 127.0.0.1), and the
document's redirect URIs must pass the same policy as dynamically registered ones.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time

import urllib3
from django.conf import settings
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from oauth.clients import check_client_metadata
from oauth.exceptions import OAuthError


def _allowed_address(ip: str) -> bool:
    if cimd._ip_is_public(ip):
        return True
    return settings.OAUTH_CIMD_ALLOW_LOOPBACK and ipaddress.ip_address(ip).is_loopback


def resolve(hostname: str, port: int) -> list[str]:
    """The host's addresses, all of them allowed; a host with any other address is refused whole.

    Raises:
        cimd.CIMDError: unresolvable, or an address that is private, link-local, reserved, or
            loopback while loopback is not allowed.
    """
    try:
        infos = socket.getaddrinfo(hostname, port, proto=socket.IPPROTO_TCP)
    except socket.gaierror as err:
        raise cimd.CIMDError(f"could not resolve client_id host: {err}") from err
    ips = [info[4][0] for info in infos]
    refused = [ip for ip in ips if not _allowed_address(ip)]
    if refused or not ips:
        raise cimd.CIMDError(f"client_id host resolves to a refused address ({refused[:1] or 'none'})")
    return ips


class PlatformMetadataFetcher(cimd.SafeMetadataFetcher):
    def fetch(self, client_id: str) -> tuple[dict, int]:
        parsed = cimd._validate_client_id_url(client_id)
        port = parsed.port or 443
        ips = resolve(parsed.hostname, port)
        metadata, max_age = self._fetch_pinned(parsed, port, ips)
        try:
            check_client_metadata(metadata, default_auth_method="none")
        except OAuthError as err:
            raise cimd.CIMDError(str(err)) from err
        return metadata, max_age

    def _fetch_pinned(self, parsed, port: int, ips: list[str]) -> tuple[dict, int]:
        """GET the document from the checked addresses in turn, within one deadline for them all."""
        path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        headers = {"Host": parsed.netloc, "Accept": "application/json, application/*+json"}
        deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        last_error: Exception | None = None
        for ip in ips:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            # Connect to the checked address; SNI, certificate and Host use the real name.
            pool = urllib3.HTTPSConnectionPool(
                host=ip,
                port=port,
                timeout=urllib3.Timeout(connect=remaining, read=remaining, total=remaining),
                retries=False,
                maxsize=1,
                ssl_context=ssl.create_default_context(),
                server_hostname=parsed.hostname,
            )
            try:
                response = pool.urlopen("GET", path, headers=headers, redirect=False, preload_content=False)
                try:
                    return self._read_document(response)
                finally:
                    response.release_conn()
            except urllib3.exceptions.HTTPError as err:
                last_error = err
            finally:
                pool.close()
        raise cimd.CIMDError(f"could not fetch client_id document: {last_error}")
