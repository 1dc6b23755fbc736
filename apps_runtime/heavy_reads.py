"""Heavy record reads of one tenant, bounded in number at once per server process.

A ``records_query`` page may hold up to 200 records of up to 256 KiB each: 50 MB loaded by one call.
Pages are cut at their byte budget before anything large is read (``records.query_records``), and a
read that still loads more than ``RECORDS_HEAVY_READ_BYTES`` holds one of the tenant's
``RECORDS_HEAVY_READS_PER_TENANT`` slots (``core.tenant_gate``): another tenant's reads never wait for
them, and one tenant's many threads cannot hold many such pages in memory at once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from django.conf import settings

from apps_runtime.exceptions import RuntimeDomainError
from core.tenant_gate import TenantGate

WAIT_SECONDS = 10.0


class HeavyReadsBusy(RuntimeDomainError):
    """The tenant already runs its share of heavy reads, and none ended in time."""

    status, code = 503, "busy"

    def __init__(self, limit: int):
        self.limit = limit
        super().__init__(
            f"this workspace already runs {limit} large record reads at once; retry shortly, or ask for "
            "fewer or smaller records (a lower limit)"
        )


_gate: TenantGate | None = None
_gate_lock = threading.Lock()


def _tenant_gate(limit: int) -> TenantGate:
    global _gate
    with _gate_lock:
        if _gate is None or _gate.limit != limit:  # the setting changed (tests)
            _gate = TenantGate(limit)
        return _gate


@contextlib.contextmanager
def heavy_read(tenant_id: int, size_bytes: int) -> Iterator[None]:
    """Hold one of the tenant's heavy-read slots while a read of ``size_bytes`` loads, if it is heavy.

    Raises:
        HeavyReadsBusy: no slot freed up within ``WAIT_SECONDS``.
    """
    if size_bytes <= settings.RECORDS_HEAVY_READ_BYTES:
        yield
        return
    limit = settings.RECORDS_HEAVY_READS_PER_TENANT
    with _tenant_gate(limit).slot(tenant_id, WAIT_SECONDS) as entered:
        if not entered:
            raise HeavyReadsBusy(limit)
        yield
