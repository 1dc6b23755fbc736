"""The connection layer of outbound requests: DNS resolved once, every address checked, and the socket
opened to the checked address, so there is no window between the check and the connect for a
changing DNS answer (rebinding). TLS still verifies, and sends SNI for, the URL's host name: httpcore
starts TLS with the origin's host, not with the address given to ``connect_tcp``.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import httpcore2
import httpx2
from httpcore2._backends.sync import SyncBackend

from apps_runtime.egress.addresses import Network, refusal

Resolver = Callable[[str, int], list[str]]


class AddressRefused(Exception):
    """The destination resolved to an address outside what an outbound request may reach."""

    def __init__(self, host: str, address: str, kind: str):
        self.host, self.address, self.kind = host, address, kind
        super().__init__(f"{host} resolves to {kind} ({address}), which outbound requests may not reach")


class Unresolvable(Exception):
    """The destination's name has no address."""


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (one DNS lookup)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise Unresolvable(host) from err
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


# Replaced by tests (``set_resolver``) to drive DNS answers, e.g. one that changes between two lookups.
_resolver: list[Resolver] = [system_resolver]


def set_resolver(resolver: Resolver | None) -> None:
    """Use ``resolver`` for names from now on (None: the system's)."""
    _resolver[0] = resolver or system_resolver


# getaddrinfo takes no timeout: lookups run here, and a caller waits no longer than its connect timeout
# (a lookup that hangs keeps one of these threads until the system gives up, never a handler's call).
_lookups = ThreadPoolExecutor(max_workers=8, thread_name_prefix="egress-dns")


def resolve(host: str, port: int, timeout: float | None = None) -> list[str]:
    """Raises: Unresolvable: no answer, or none within ``timeout`` seconds."""
    try:
        return [str(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:
        pass
    try:
        return _lookups.submit(_resolver[0], host, port).result(timeout=timeout)
    except FutureTimeout:
        raise Unresolvable(host) from None


class _DeadlineStream(httpcore2.NetworkStream):
    """A stream whose every read and write waits at most until ``deadline`` (time.monotonic()).

    httpcore's timeouts are per read: an upstream sending a byte within each one (a header line at a
    time, say) would otherwise hold the request, and its tenant's share, for as long as it likes.
    """

    def __init__(self, stream: httpcore2.NetworkStream, deadline: float):
        self._stream, self._deadline = stream, deadline

    def _left(self, timeout: float | None, error: type[Exception]) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise error("the outbound request's deadline passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        stream = self._stream.start_tls(
            ssl_context, server_hostname, self._left(timeout, httpcore2.ConnectTimeout)
        )
        return _DeadlineStream(stream, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class PinnedBackend(SyncBackend):
    """httpcore's sync backend, connecting only to checked addresses; ``connected`` records each one.

    With a ``deadline`` (time.monotonic()), no read or write of its streams waits past it.
    """

    def __init__(self, allowed: tuple[Network, ...], deadline: float | None = None):
        self.allowed = allowed
        self.deadline = deadline
        self.connected: list[str] = []

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        """Raises: AddressRefused, Unresolvable; httpcore's connect errors."""
        addresses = resolve(host, port, timeout)
        if not addresses:
            raise Unresolvable(host)
        for address in addresses:  # every answer, so a mixed answer is refused whichever one is used
            kind = refusal(ipaddress.ip_address(address), self.allowed)
            if kind is not None:
                raise AddressRefused(host, address, kind)
        self.connected.append(addresses[0])
        stream = super().connect_tcp(addresses[0], port, timeout, local_address, socket_options)
        return stream if self.deadline is None else _DeadlineStream(stream, self.deadline)


_tls: list[ssl.SSLContext] = []


def tls_context() -> ssl.SSLContext:
    """One verifying context for every outbound request (building a CA store costs ~40 ms)."""
    if not _tls:
        _tls.append(httpx2.create_ssl_context(verify=True))
    return _tls[0]


class PinnedTransport(httpx2.HTTPTransport):
    """An httpx transport over ``PinnedBackend``; no proxy from the environment, no pooling across calls."""

    def __init__(self, backend: PinnedBackend):
        super().__init__(verify=tls_context(), trust_env=False)
        # HTTPTransport takes no network backend, so its pool is rebuilt with one (same defaults).
        self._pool = httpcore2.ConnectionPool(ssl_context=tls_context(), network_backend=backend)
