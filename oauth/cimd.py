"""Fetching client ID metadata documents: the toolkit's SSRF-hardened fetcher, with the platform's rules.

The toolkit resolves the client_id URL's host once, refuses every non-public address, connects to
the address it checked (no DNS rebinding), follows no redirect, and caps time and size. This
fetcher keeps all of that and adds four rules: a loopback host is allowed only when
``OAUTH_CIMD_ALLOW_LOOPBACK`` is on (DEBUG and tests, which serve documents on 127.0.0.1); the
document's redirect URIs must pass the same policy as dynamically registered ones; a fetch has one
deadline in all, however slowly the server drips its answer (a socket's read timeout restarts with
every byte, so a server sending one byte a second held a fetch for a minute); and at most
``OAUTH_CIMD_FETCHES_PER_HOST`` fetches run at once for one host, so slow hosts fill their own
slots, not the process's whole in-flight limit that every other sign-in needs.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Iterator

import urllib3
from django.conf import settings
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from oauth.clients import check_client_metadata
from oauth.exceptions import OAuthError

_CHUNK = 1024
_per_host: Counter[str] = Counter()
_per_host_lock = threading.Lock()


@contextlib.contextmanager
def _host_slot(host: str) -> Iterator[None]:
    """One of the host's fetch slots, without waiting.

    Raises:
        cimd.CIMDError: the host already has OAUTH_CIMD_FETCHES_PER_HOST fetches in flight.
    """
    with _per_host_lock:
        if _per_host[host] >= settings.OAUTH_CIMD_FETCHES_PER_HOST:
            raise cimd.CIMDError("too many client_id documents are being fetched from this host; retry later")
        _per_host[host] += 1
    try:
        yield
    finally:
        with _per_host_lock:
            _per_host[host] -= 1
            if _per_host[host] <= 0:
                del _per_host[host]


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
        with _host_slot(parsed.hostname.lower()):
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
                    return self._read_document(_DeadlineBody(response, deadline))
                finally:
                    response.release_conn()
            except urllib3.exceptions.HTTPError as err:
                last_error = err
            finally:
                pool.close()
        raise cimd.CIMDError(f"could not fetch client_id document: {last_error}")


class _DeadlineBody:
    """The response as ``_read_document`` reads it, with a body read chunk by chunk against the
    fetch's deadline: each socket read may wait only for the time left."""

    def __init__(self, response: urllib3.BaseHTTPResponse, deadline: float):
        self._response = response
        self._deadline = deadline
        self.status = response.status
        self.headers = response.headers

    def read(self, amount: int) -> bytes:
        sock = getattr(self._response.connection, "sock", None)
        body = bytearray()
        while len(body) < amount:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise cimd.CIMDError("client_id document was not received in time")
            if sock is not None:
                sock.settimeout(remaining)
            try:
                chunk = self._response.read1(min(_CHUNK, amount - len(body)))
            except (TimeoutError, urllib3.exceptions.HTTPError) as err:
                raise cimd.CIMDError("client_id document was not received in time") from err
            if not chunk:
                break
            body += chunk
        return bytes(body)
