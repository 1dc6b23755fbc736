"""The one path of an outbound request: made by the platform for a handler, never by the sandbox.

``send`` checks the destination against the app version's ``egress``, puts secrets and the caller's
connection token in place, connects only to checked addresses (``transport``), follows redirects by
hand (each hop checked again), bounds time, sizes and counts, scrubs what it put in from the answer,
and records every request, made or refused, as an ``OutboundRequest`` row (never bodies, headers or
secrets). A refusal raises ``Refused``; the handler sees ``EgressRefused`` with the same words.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote_plus, urlencode

import httpx2
from django.conf import settings

from apps_runtime.egress import budgets, connections, secrets
from apps_runtime.egress.addresses import parse_networks
from apps_runtime.egress.rules import DEFAULT_PORTS, EgressRule, allowed
from apps_runtime.egress.transport import AddressRefused, PinnedBackend, PinnedTransport, Unresolvable
from apps_runtime.models import OutboundRequest
from core.metrics import EGRESS_BYTES, EGRESS_REQUESTS
from tenants.callers import Caller

logger = logging.getLogger("apps_runtime.egress")

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
PLACEHOLDER = re.compile(r"\{\{lcp\.secret:([A-Z][A-Z0-9_]{0,63})\}\}")
SCRUBBED = "[secret]"
# Left of the route's time limit for the handler to use the answer: a request never ends the call.
TIME_MARGIN_S = 0.2
MAX_HEADERS = 50
MAX_URL_CHARS = 8192


class Refused(Exception):
    """The request was not made or not finished; ``rule`` in words a developer acts on."""

    def __init__(self, rule: str, *, retryable: bool = False):
        super().__init__(rule)
        self.rule = rule
        self.retryable = retryable
        self.recorded = False  # its audit row is written


@dataclass
class EgressCall:
    """One handler call's outbound state: its app's rules, who it runs as, its budget and deadline."""

    tenant_id: int
    tenant_slug: str
    app_id: int
    route_key: str
    caller: Caller
    deadline: float  # time.monotonic() when the route's time limit ends
    rules: tuple[EgressRule, ...]
    declared_secrets: frozenset[str]
    connections: dict[str, dict]
    trace_id: str = ""
    # The provider of a connection the caller has not connected yet, once a request needed it: the
    # MCP gateway may then ask them to connect (a URL-mode elicitation) instead of answering the error.
    missing_connection: str = ""
    requests: int = 0
    bytes: int = 0
    audit: list[OutboundRequest] = field(default_factory=list)


@dataclass
class _Outgoing:
    method: str
    url: httpx2.URL
    shown_path: str  # the path as the handler wrote it (placeholders, not values), for the audit row
    headers: dict[str, str]
    body: bytes | None
    content_type: str | None


def send(call: EgressCall, args: dict) -> dict:
    """Make the handler's request ``args`` (the SDK's ``http.request`` frame) and return its answer.

    Raises:
        Refused: a rule refused it, or it could not be finished (``retryable``).
    """
    started = time.monotonic()
    method = str(args.get("method", "")).upper()
    row = OutboundRequest(
        tenant_id=call.tenant_id,
        app_id=call.app_id,
        route_key=call.route_key[:300],
        caller=(call.caller.username or "")[:150],
        trace_id=call.trace_id,
        method=method[:10],
    )
    values: dict[str, str] = {}
    try:
        outgoing, values = _prepare(call, method, args, row)
        return _exchange(call, outgoing, values, row, started)
    except Refused as refusal:
        if not refusal.recorded:
            _record(call, row, "refused", started, refusal=refusal.rule)
        raise


def _count(call: EgressCall, row: OutboundRequest, sent: int) -> None:
    row.bytes_sent = sent
    call.requests += 1
    if call.requests > settings.EGRESS_MAX_REQUESTS_PER_CALL:
        raise Refused(f"more than {settings.EGRESS_MAX_REQUESTS_PER_CALL} outbound requests in one call")
    if not budgets.take_tenant_request(call.tenant_id):
        raise Refused(
            "this tenant's outbound requests per minute are used up; try again shortly", retryable=True
        )
    call.bytes += sent
    if call.bytes > settings.EGRESS_MAX_BYTES_PER_CALL:
        raise Refused(f"more than {settings.EGRESS_MAX_BYTES_PER_CALL} outbound bytes in one call")


def _prepare(
    call: EgressCall, method: str, args: dict, row: OutboundRequest
) -> tuple[_Outgoing, dict[str, str]]:
    if method not in METHODS:
        raise Refused(f"method must be one of {', '.join(sorted(METHODS))}")
    raw_url = args.get("url")
    if not isinstance(raw_url, str) or len(raw_url) > MAX_URL_CHARS:
        raise Refused(f"url must be a string of at most {MAX_URL_CHARS} characters")
    try:
        shown = httpx2.URL(raw_url)
    except httpx2.InvalidURL as err:
        raise Refused(f"url is not a URL: {err}") from None
    row.scheme, row.host, row.port, row.path = shown.scheme, shown.host, _port(shown), shown.path[:500]
    _check_destination(call, shown)
    if PLACEHOLDER.search(str(shown.netloc, "ascii", "replace")):
        raise Refused("a secret may go in a URL's path or query, never in its host")
    names = set(PLACEHOLDER.findall(json.dumps(args, default=str)))
    values = _secret_values(call, names)
    try:  # the messages of these errors may quote the URL, which now holds values: never passed on
        url = httpx2.URL(_fill(raw_url, values))
        params = args.get("params")
        if params is not None:
            if not isinstance(params, dict):
                raise Refused("params must be an object")
            url = url.copy_merge_params({str(k): _fill(str(v), values) for k, v in params.items()})
    except (httpx2.InvalidURL, ValueError, TypeError):
        raise Refused("the URL with its secrets put in place is not a valid URL") from None
    headers = _headers(args.get("headers"), values)
    body, content_type = _body(args, values)
    if body is not None and len(body) > settings.EGRESS_MAX_REQUEST_BYTES:
        raise Refused(f"the request body is over {settings.EGRESS_MAX_REQUEST_BYTES} bytes")
    name = args.get("connection")
    if name is not None:
        token = _connection_token(call, name, row)
        values[f"connection:{name}"] = token
        headers["authorization"] = f"Bearer {token}"
    return _Outgoing(method, url, shown.path[:500], headers, body, content_type), values


def _port(url: httpx2.URL) -> int:
    return url.port or DEFAULT_PORTS.get(url.scheme, 0)


def _check_destination(call: EgressCall, url: httpx2.URL) -> None:
    if url.scheme not in DEFAULT_PORTS:
        raise Refused(f"only http and https URLs may be requested, not {url.scheme!r:.20}")
    if not allowed(call.rules, url.scheme, url.host, _port(url)):
        default = DEFAULT_PORTS[url.scheme] == _port(url) and url.scheme == "https"
        entry = url.host if default else f"{url.scheme}://{url.host}:{_port(url)}"
        raise Refused(
            f"{url.scheme}://{url.host}:{_port(url)} is not in this app's egress: "
            f'add "{entry}" to "egress" in app.json and deploy again'
        )


def _secret_values(call: EgressCall, names: set[str]) -> dict[str, str]:
    undeclared = sorted(names - call.declared_secrets)
    if undeclared:
        raise Refused(f'secret {undeclared[0]} is not declared: add it to "secrets" in app.json')
    found = secrets.values_for(call.tenant_id, names) if names else {}
    unset = sorted(name for name, value in found.items() if value is None)
    if unset:
        raise Refused(
            f"secret {unset[0]} is not set: a tenant admin sets it with "
            f"PUT /api/tenants/{call.tenant_slug}/secrets/{unset[0]}"
        )
    return {name: value for name, value in found.items() if value is not None}


def _fill(text: str, values: dict[str, str], *, escape: bool = False) -> str:
    def value(match: re.Match) -> str:
        plain = values[match.group(1)]
        return json.dumps(plain)[1:-1] if escape else plain

    return PLACEHOLDER.sub(value, text)


def _headers(given: Any, values: dict[str, str]) -> dict[str, str]:
    if given is None:
        return {}
    if not isinstance(given, dict) or len(given) > MAX_HEADERS:
        raise Refused(f"headers must be an object of at most {MAX_HEADERS} names to strings")
    headers = {}
    for name, value in given.items():
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}", str(name)):
            raise Refused(f"header {str(name)[:40]!r} must be a token name with a string value")
        if name.lower() in {"host", "content-length", "transfer-encoding", "connection"}:
            raise Refused(f"header {name!r} is set by the platform")
        headers[name.lower()] = _fill(value, values)
    return headers


def _body(args: dict, values: dict[str, str]) -> tuple[bytes | None, str | None]:
    if "json" in args and args.get("data") is not None:
        raise Refused("send json or data, not both")
    if "json" in args:
        text = json.dumps(args["json"], ensure_ascii=False, separators=(",", ":"))
        return _fill(text, values, escape=True).encode(), "application/json"
    data = args.get("data")
    if data is None:
        return None, None
    if isinstance(data, str):
        return _fill(data, values).encode(), None
    if isinstance(data, dict):
        form = {str(k): _fill(str(v), values) for k, v in data.items()}
        return urlencode(form).encode(), "application/x-www-form-urlencoded"
    raise Refused("data must be a string or an object (form fields)")


def _connection_token(call: EgressCall, name: Any, row: OutboundRequest) -> str:
    spec = call.connections.get(name) if isinstance(name, str) else None
    if spec is None:
        raise Refused(f'connection {str(name)[:40]!r} is not declared: add it to "connections" in app.json')
    prov = connections.provider(spec.get("provider", ""))
    if prov is None:
        raise Refused(
            f"provider {spec.get('provider')!r} of connection {name!r} is not configured on this platform"
        )
    account, token = connections.token_for(call.caller, prov)
    row.connection, row.account = name[:64], account
    if account == "service" and token is None:
        raise Refused(
            f"connection {name!r} runs as a service principal here ({call.caller.username}), and no tenant "
            f"admin has connected a {prov.name} service account: {connections.accounts_url(call.tenant_slug)}"
        )
    if token is None:
        if not account:
            raise Refused(f"connection {name!r} carries a member's own account, and nobody is signed in")
        call.missing_connection = call.missing_connection or prov.name  # a member's own: asked by URL
        raise Refused(
            f"connect your {prov.name} account first: {connections.accounts_url(call.tenant_slug)} "
            f"(then call again)"
        )
    return token


def _remaining(call: EgressCall, wanted: Any) -> float:
    left = call.deadline - time.monotonic() - TIME_MARGIN_S
    if isinstance(wanted, int | float) and not isinstance(wanted, bool) and wanted > 0:
        left = min(left, float(wanted))
    if left <= 0:
        raise Refused("no time left in this call's time limit for an outbound request", retryable=True)
    return left


def _exchange(
    call: EgressCall, outgoing: _Outgoing, values: dict[str, str], row: OutboundRequest, started: float
) -> dict:
    allowed_networks = parse_networks(settings.EGRESS_ALLOWED_NETWORKS)
    end = time.monotonic() + _remaining(call, None)
    try:
        with budgets.share(call.tenant_id, end):
            for hop in range(settings.EGRESS_MAX_REDIRECTS + 1):
                _count(call, row, len(outgoing.body or b""))
                status, headers, content = _one_request(outgoing, allowed_networks, end)
                call.bytes += len(content)
                _record(call, row, "ok", started, status=status, received=len(content))
                location = headers.get("location")
                if status not in REDIRECTS or not location:
                    return _answer(status, headers, content, values)
                if hop == settings.EGRESS_MAX_REDIRECTS:
                    break
                url = _location(outgoing.url, location)
                row, started = (
                    _next_row(row, outgoing.method, url, _scrub(url.path, values)),
                    time.monotonic(),
                )
                _check_destination(call, url)
                outgoing = _redirected(outgoing, status, url, values)
    except budgets.Busy as busy:
        refusal = Refused(f"{busy}; try again shortly", retryable=True)
    except Refused as raised:
        refusal = raised
    else:
        refusal = Refused(f"more than {settings.EGRESS_MAX_REDIRECTS} redirects")
    if row.pk is None:
        _record(call, row, "refused", started, refusal=refusal.rule)
    refusal.recorded = True
    raise refusal


def _next_row(previous: OutboundRequest, method: str, url: httpx2.URL, path: str) -> OutboundRequest:
    # A connection's token follows a redirect only to the same origin (``_redirected``): so does its mention.
    same_origin = (previous.scheme, previous.host, previous.port) == (url.scheme, url.host, _port(url))
    return OutboundRequest(
        tenant_id=previous.tenant_id,
        app_id=previous.app_id,
        route_key=previous.route_key,
        caller=previous.caller,
        trace_id=previous.trace_id,
        method=method,
        scheme=url.scheme,
        host=url.host,
        port=_port(url),
        path=path[:500],
        connection=previous.connection if same_origin else "",
        account=previous.account if same_origin else "",
    )


def _location(base: httpx2.URL, location: str) -> httpx2.URL:
    try:
        return base.join(location)
    except httpx2.InvalidURL:
        raise Refused("a redirect's Location is not a URL") from None


def _redirected(outgoing: _Outgoing, status: int, url: httpx2.URL, values: dict[str, str]) -> _Outgoing:
    """The next hop (its destination checked already), as browsers and httpx follow one."""
    headers = dict(outgoing.headers)
    method, body, content_type = outgoing.method, outgoing.body, outgoing.content_type
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
        method, body, content_type = "GET", None, None
        headers.pop("content-type", None)
    if (url.scheme, url.host, _port(url)) != (outgoing.url.scheme, outgoing.url.host, _port(outgoing.url)):
        # A secret or a connection's token is for the destination the handler named, never for
        # wherever that destination sends the request on (even another host of the app's egress).
        headers.pop("authorization", None)
        headers = {name: value for name, value in headers.items() if _scrub(value, values) == value}
        if body is not None and _carries(body, values):
            raise Refused(
                f"a {status} redirect to another host ({url.host}) would send on a body holding a secret"
            )
    return _Outgoing(method, url, _scrub(url.path, values)[:500], headers, body, content_type)


def _one_request(outgoing: _Outgoing, networks: tuple, end: float) -> tuple[int, dict[str, str], bytes]:
    left = end - time.monotonic()
    if left <= 0:
        raise Refused("the call's time limit ran out during its outbound requests", retryable=True)
    timeout = httpx2.Timeout(
        connect=min(settings.EGRESS_CONNECT_TIMEOUT, left),
        read=min(settings.EGRESS_READ_TIMEOUT, left),
        write=min(settings.EGRESS_READ_TIMEOUT, left),
        pool=left,
    )
    headers = dict(outgoing.headers)
    if outgoing.content_type and "content-type" not in headers:
        headers["content-type"] = outgoing.content_type
    host = outgoing.url.host
    # The transport directly, not a Client: a Client logs each request's URL (a secret may be in it),
    # and keeps cookies across requests, which nothing here wants.
    try:
        request = httpx2.Request(outgoing.method, outgoing.url, headers=headers, content=outgoing.body)
    except (ValueError, TypeError, UnicodeError):  # a header value HTTP cannot carry; never quoted
        raise Refused("a header value is not valid in HTTP (ASCII text, no line breaks)") from None
    request.extensions["timeout"] = timeout.as_dict()
    with PinnedTransport(PinnedBackend(networks, end)) as pinned:
        try:
            response = pinned.handle_request(request)
        except AddressRefused as err:
            raise Refused(
                f"{err}; an operator lists a network in EGRESS_ALLOWED_NETWORKS to allow it"
            ) from None
        except Unresolvable:
            raise Refused(f"{host} does not resolve", retryable=True) from None
        except httpx2.TimeoutException:
            raise Refused(f"{host} did not answer in time", retryable=True) from None
        except httpx2.ConnectError as err:
            if "CERTIFICATE_VERIFY_FAILED" in repr(err.__cause__ or err):
                raise Refused(f"{host}'s TLS certificate did not verify") from None
            raise Refused(f"could not connect to {host}", retryable=True) from None
        except httpx2.HTTPError:
            raise Refused(f"the request to {host} failed", retryable=True) from None
        try:
            content = _read_capped(response, end, host)
        finally:
            response.close()
        return response.status_code, _response_headers(response), content


def _read_capped(response: httpx2.Response, end: float, host: str) -> bytes:
    cap = settings.EGRESS_MAX_RESPONSE_BYTES
    chunks, size = [], 0
    try:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > cap:
                raise Refused(f"the answer from {host} is over {cap} bytes (EGRESS_MAX_RESPONSE_BYTES)")
            if time.monotonic() > end:
                raise Refused(f"{host} was still answering when the call's time ran out", retryable=True)
            chunks.append(chunk)
    except httpx2.TimeoutException:
        raise Refused(f"{host} stopped answering", retryable=True) from None
    except httpx2.HTTPError:
        raise Refused(f"the answer from {host} broke off", retryable=True) from None
    return b"".join(chunks)


def _response_headers(response: httpx2.Response) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in response.headers.multi_items():
        name = name.lower()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def _carries(body: bytes, values: dict[str, str]) -> bool:
    """Whether ``body`` holds one of ``values`` (as put in place: plain, JSON-escaped or form-encoded)."""
    text = body.decode("utf-8", "replace")
    return any(form in text for v in values.values() if v for form in (v, json.dumps(v)[1:-1], quote_plus(v)))


def _scrub(text: str, values: dict[str, str]) -> str:
    for value in values.values():
        if value:
            text = text.replace(value, SCRUBBED)
    return text


def _answer(status: int, headers: dict[str, str], content: bytes, values: dict[str, str]) -> dict:
    text = _scrub(content.decode("utf-8", "replace"), values)
    parsed = None
    if "json" in headers.get("content-type", ""):
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
    return {
        "status": status,
        "headers": {name: _scrub(value, values) for name, value in headers.items()},
        "json": parsed,
        "text": text,
    }


def _record(
    call: EgressCall,
    row: OutboundRequest,
    outcome: str,
    started: float,
    *,
    status: int | None = None,
    received: int = 0,
    refusal: str = "",
) -> None:
    row.outcome, row.status, row.refusal = outcome, status, refusal[:300]
    row.bytes_received = received
    row.duration_ms = int((time.monotonic() - started) * 1000)
    row.save(force_insert=True)
    call.audit.append(row)
    EGRESS_REQUESTS.labels(call.tenant_slug, outcome).inc()
    if received:
        EGRESS_BYTES.labels(call.tenant_slug, "received").inc(received)
    if row.bytes_sent:
        EGRESS_BYTES.labels(call.tenant_slug, "sent").inc(row.bytes_sent)
