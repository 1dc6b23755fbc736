"""Bounded storage of the runtime's records: handler errors and finished job runs.

A failing handler leaves an error record (up to 16 KiB of trace and 64 KiB of logs): a tenant keeps
at most ``RETENTION_ERRORS_PER_TENANT`` of them, the oldest going as new ones come, and none past
``RETENTION_ERROR_DAYS``. Each member (whose call failed: ``Caller.person_key``) keeps at most their
share of that cap (``core.member_shares``), their own oldest going first, so one member's flood of
failures cannot push out the others' records. Their bytes count against the tenant's storage quota
(``storage_quota``). Finished job runs go after ``RETENTION_JOB_RUN_DAYS``, and a tenant keeps
at most ``RETENTION_JOB_RUNS_PER_TENANT`` finished runs (queued and running ones are never purged).
Outbound requests' audit rows go after ``RETENTION_OUTBOUND_DAYS``, a tenant keeping at most
``RETENTION_OUTBOUND_PER_TENANT``.

What a successful run printed or logged (``CallLog``, for ``lcp dev`` and ``lcp logs``) is kept for
every run that logged anything, whether or not someone watches: the head of its logs up to
``RETENTION_CALL_LOG_BYTES``, the newest ``RETENTION_CALL_LOGS_PER_APP`` of an app (so one busy app
cannot push out another's) and ``RETENTION_CALL_LOGS_PER_TENANT`` of a tenant (both trimmed as rows
are written, every ``CALL_LOG_TRIM_EVERY`` writes, and by the hourly purge), and none past
``RETENTION_CALL_LOG_HOURS``. A run that logs nothing costs nothing. They are not counted against the
storage quota: a tenant's are at most RETENTION_CALL_LOGS_PER_TENANT times RETENTION_CALL_LOG_BYTES.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from apps_runtime.models import App, CallLog, HandlerError, JobRun, OutboundRequest
from core.caches import BoundedCache
from core.member_shares import member_share
from core.retention import cutoff, keep_newest
from core.storable import storable_text
from tenants.models import Tenant

FINISHED = (JobRun.Status.SUCCEEDED, JobRun.Status.FAILED, JobRun.Status.TIMED_OUT)
_TEXT_FIELDS = ("kind", "route_key", "caller", "trace", "logs")


def record_handler_error(*, member: str = "", **fields) -> HandlerError:
    """Keep a handler failure for the tenant's admins, within the member's share of the tenant's
    cap on error records, and within that cap. The text is the handler's own (an exception message,
    its logs): whatever it holds, the record is kept (``storable_text``)."""
    for name in _TEXT_FIELDS:
        if isinstance(fields.get(name), str):
            fields[name] = storable_text(fields[name])
    size = len(fields.get("trace", "").encode()) + len(fields.get("logs", "").encode())
    error = HandlerError.objects.create(member=member, size_bytes=size, **fields)
    cap = settings.RETENTION_ERRORS_PER_TENANT
    mine = HandlerError.objects.for_tenant(error.tenant_id).filter(member=member)
    keep_newest(mine, member_share(cap))
    keep_newest(HandlerError.objects.for_tenant(error.tenant_id), cap)
    return error


# A chatty app writes a call log on every call: its caps are applied on its first write in a process and
# then every CALL_LOG_TRIM_EVERY-th, not on each (the two trims cost more than the write). Between two
# trims a cap may be passed by that many rows per serving process; the hourly purge applies them all.
CALL_LOG_TRIM_EVERY = 10
_call_log_writes: BoundedCache[int, int] = BoundedCache(4096)  # app id -> its writes since its last trim


def call_log_text(logs: str, max_bytes: int) -> str:
    """The head of ``logs`` in at most ``max_bytes`` UTF-8 bytes, saying how much was cut."""
    encoded = logs.encode()
    if len(encoded) <= max_bytes:
        return logs
    head = encoded[:max_bytes].decode(errors="ignore")
    return f"{head}\n[log truncated: {len(encoded) - max_bytes} more bytes dropped]\n"


def record_call_log(
    *, app: App, version_number: int, route_key: str, caller: str, status: int, logs: str
) -> CallLog | None:
    """Keep what a successful run of ``app`` logged, within the app's and the tenant's caps; None
    when it logged nothing or call logs are off (``RETENTION_CALL_LOG_BYTES`` 0)."""
    max_bytes = settings.RETENTION_CALL_LOG_BYTES
    if not logs or max_bytes == 0:
        return None
    row = CallLog.objects.create(
        tenant_id=app.tenant_id,
        app=app,
        version_number=version_number,
        route_key=storable_text(route_key),
        caller=storable_text(caller),
        status=status,
        logs=storable_text(call_log_text(logs, max_bytes)),
    )
    writes = _call_log_writes.get(app.pk) or 0
    _call_log_writes.put(app.pk, (writes + 1) % CALL_LOG_TRIM_EVERY)
    if writes == 0:  # the app's first write in this process, then every CALL_LOG_TRIM_EVERY-th
        trim_call_logs(app.tenant_id, app.pk)
    return row


def trim_call_logs(tenant_id: int, app_id: int) -> int:
    """Keep the app's newest call logs within its cap, and the tenant's within its own."""
    tenant_rows = CallLog.objects.for_tenant(tenant_id)
    mine = keep_newest(tenant_rows.filter(app_id=app_id), settings.RETENTION_CALL_LOGS_PER_APP)
    return mine + keep_newest(tenant_rows, settings.RETENTION_CALL_LOGS_PER_TENANT)


def purge(now: datetime) -> dict[str, int]:
    """Delete error records and finished runs past their retention or over their tenant's cap
    (registered with ``core.retention`` in ``AppsRuntimeConfig.ready``)."""
    errors, _ = HandlerError.all_tenants.filter(
        created_at__lt=cutoff(settings.RETENTION_ERROR_DAYS, now)
    ).delete()
    old_runs = JobRun.all_tenants.filter(status__in=FINISHED)
    runs, _ = old_runs.filter(finished_at__lt=cutoff(settings.RETENTION_JOB_RUN_DAYS, now)).delete()
    outbound, _ = OutboundRequest.all_tenants.filter(
        created_at__lt=cutoff(settings.RETENTION_OUTBOUND_DAYS, now)
    ).delete()
    call_logs, _ = CallLog.all_tenants.filter(
        created_at__lt=cutoff(settings.RETENTION_CALL_LOG_HOURS / 24, now)
    ).delete()
    for tenant_id, app_id in CallLog.all_tenants.order_by().values_list("tenant_id", "app_id").distinct():
        call_logs += trim_call_logs(tenant_id, app_id)
    for tenant_id in Tenant.objects.values_list("pk", flat=True):
        outbound += keep_newest(
            OutboundRequest.objects.for_tenant(tenant_id), settings.RETENTION_OUTBOUND_PER_TENANT
        )
        errors += keep_newest(
            HandlerError.objects.for_tenant(tenant_id), settings.RETENTION_ERRORS_PER_TENANT
        )
        finished = JobRun.objects.for_tenant(tenant_id).filter(status__in=FINISHED)
        runs += keep_newest(finished, settings.RETENTION_JOB_RUNS_PER_TENANT)
    return {"handler_errors": errors, "job_runs": runs, "outbound_requests": outbound, "call_logs": call_logs}
