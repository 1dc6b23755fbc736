"""The platform side of a handler's data calls: op names to permission-checked actions."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from apps_runtime import handler_contract as protocol
from apps_runtime import records
from apps_runtime.call_events import CallEvents, notice_ops
from apps_runtime.egress.client import EgressCall, Refused, send
from apps_runtime.exceptions import PermissionDenied, RecordInvalid, RecordNotFound, RuntimeDomainError
from apps_runtime.jobs.enqueue import enqueue_run
from apps_runtime.jobs.exceptions import JobEnqueueLimit, JobRouteNotFound
from apps_runtime.record_quota import RecordLimitExceeded
from apps_runtime.records import RecordsScope
from apps_runtime.sandbox import BrokerError
from apps_runtime.storage_quota import StorageQuotaExceeded
from core import tracing

Broker = Callable[[str, dict], Any]


def _records_ops(scope: RecordsScope) -> dict[str, Callable[[dict], Any]]:
    return {
        protocol.RECORDS_QUERY: lambda a: records.query_records(
            scope,
            a.get("collection"),
            where=a.get("where"),
            order_by=a.get("order_by"),
            limit=a.get("limit", 50),
            cursor=a.get("cursor"),
            # A page the handler could not return anyway is not loaded whole.
            max_bytes=settings.SANDBOX_MAX_RESPONSE_BYTES,
        ),
        protocol.RECORDS_GET: lambda a: records.get_record(scope, a.get("collection"), a.get("id")),
        protocol.RECORDS_CREATE: lambda a: records.create_record(scope, a.get("collection"), a.get("data")),
        protocol.RECORDS_UPDATE: lambda a: records.update_record(
            scope, a.get("collection"), a.get("id"), a.get("data")
        ),
        protocol.RECORDS_DELETE: lambda a: records.delete_record(scope, a.get("collection"), a.get("id")),
    }


def _jobs_ops(scope: RecordsScope, enqueued: list[str]) -> dict[str, Callable[[dict], Any]]:
    origin: list[str] = []  # the tree this call's runs belong to, once its first run names it

    def enqueue(args: dict) -> str:
        if len(enqueued) >= settings.JOBS_MAX_ENQUEUES_PER_CALL:
            raise JobEnqueueLimit("per_call", settings.JOBS_MAX_ENQUEUES_PER_CALL)
        run = enqueue_run(scope, args.get("route"), args.get("body"), origin[0] if origin else None)
        origin[:1] = [run.origin]
        enqueued.append(run.run_id)
        return run.run_id

    return {protocol.JOBS_ENQUEUE: enqueue}


def _http_ops(egress: EgressCall, parent: str | None) -> dict[str, Callable[[dict], Any]]:
    def request(args: dict) -> dict:
        with _outbound_span(args, parent) as span:
            try:
                answer = send(egress, args)
            except Refused as refusal:
                code = protocol.EGRESS_RETRYABLE if refusal.retryable else protocol.EGRESS_REFUSED
                tracing.failed(span, code)
                raise BrokerError(code, refusal.rule) from None
            if span is not None:
                span.set_attribute("http.response.status_code", answer["status"])
                if answer["status"] >= 400:
                    tracing.failed(span, str(answer["status"]))
            return answer

    return {protocol.HTTP_REQUEST: request}


def _outbound_span(args: dict, parent: str | None):
    """A CLIENT span of one outbound request: its method and host, never its path or query."""
    if parent is None:
        return nullcontext()
    try:
        host = urlsplit(str(args.get("url", ""))).hostname or ""
    except ValueError:
        host = ""
    return tracing.outbound_request(str(args.get("method", "")).upper()[:10], host[:255], parent=parent)


def make_broker(
    scope: RecordsScope,
    *,
    enqueued: list[str] | None = None,
    events: CallEvents | None = None,
    egress: EgressCall | None = None,
) -> Broker:
    """A broker bound to one invocation's tenant, app and caller: the pipe's capability.

    With ``enqueued``, handlers may queue background runs (as the same caller); their run ids are
    appended there for the caller to send once the handler is done. Progress and log notices go to
    ``events`` (checked first), or nowhere. With ``egress``, handlers may make outbound requests.
    """
    parent = tracing.current_traceparent()  # the handler run's span; the pipe may be read elsewhere
    ops = _records_ops(scope) | notice_ops(events)
    if egress is not None:
        ops.update(_http_ops(egress, parent))
    if enqueued is not None:
        ops.update(_jobs_ops(scope, enqueued))

    def broker(op: str, args: dict) -> Any:
        handler = ops.get(op)
        if handler is None:
            raise BrokerError("invalid", f"unknown operation '{op}'")
        if not isinstance(args, dict):
            raise BrokerError("invalid", "arguments must be an object")
        traced = parent is not None and op != protocol.HTTP_REQUEST  # an outbound request has its own
        with tracing.span(op, parent=parent) if traced else nullcontext():  # the op's name, no contents
            return _serve(handler, args)

    return broker


def _serve(handler: Callable[[dict], Any], args: dict) -> Any:
    """One broker operation, its domain errors as the ``BrokerError`` the handler sees.

    Raises:
        BrokerError: not found, permission denied, over a limit, or invalid.
    """
    try:
        return handler(args)
    except (RecordNotFound, JobRouteNotFound) as err:
        raise BrokerError("not_found", err.message) from err
    except PermissionDenied as err:
        raise BrokerError("permission_denied", err.message) from err
    except (JobEnqueueLimit, RecordLimitExceeded, StorageQuotaExceeded) as err:
        raise BrokerError("limit", err.message) from err
    except RecordInvalid as err:
        raise BrokerError("invalid", err.message) from err
    except RuntimeDomainError as err:
        raise BrokerError("invalid", err.message) from err
