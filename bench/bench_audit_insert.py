"""The CPU of writing one audit row, in process: the platform's compiled INSERT (``audit_log._insert``)
against Django's ``bulk_create`` of the same row, alternating rounds, as ratios in one run.

    .venv/bin/python bench/bench_audit_insert.py [--rounds 5] [--rows 2000] [--batch 1]

SQLite by default (the bench's scratch database); BENCH_DATABASE_URL=postgres://... for PostgreSQL.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _setup import setup_django

setup_django()

from django.db import connection  # noqa: E402

from mcp_gateway import audit_log  # noqa: E402
from mcp_gateway.models import ToolCallAudit  # noqa: E402
from tenants import actions  # noqa: E402


def rows(tenant_id: int, count: int) -> list[ToolCallAudit]:
    return [
        ToolCallAudit(
            tenant_id=tenant_id,
            wire_name="bench_ping_app_ping",
            app_name="ping_app",
            app_version=1,
            outcome="ok",
            duration_ms=1.0,
            arguments_sha256=audit_log.arguments_hash({}),
        )
        for _ in range(count)
    ]


def compiled(batch: list[ToolCallAudit]) -> None:
    audit_log._insert(connection, batch)


def bulk(batch: list[ToolCallAudit]) -> None:
    ToolCallAudit.all_tenants.bulk_create(batch)


def cpu_per_row(write, tenant_id: int, count: int, batch: int) -> float:
    made = [rows(tenant_id, batch) for _ in range(count // batch)]
    started = time.process_time()
    for group in made:
        write(group)
    return (time.process_time() - started) * 1e6 / count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    tenant = actions.create_tenant("auditbench", acting_user=None)
    found: dict[str, list[float]] = {"bulk_create": [], "compiled": []}
    for _ in range(args.rounds):
        found["bulk_create"].append(cpu_per_row(bulk, tenant.pk, args.rows, args.batch))
        found["compiled"].append(cpu_per_row(compiled, tenant.pk, args.rows, args.batch))
    base = statistics.median(found["bulk_create"])
    load = os.getloadavg()[0]
    print(f"load {load:.1f}; {connection.vendor}, batches of {args.batch}, {args.rounds} alternating rounds:")
    for name, values in found.items():
        median = statistics.median(values)
        print(f"  {name:12s} {median:7.1f} us CPU a row   {median / base:4.2f}x")


if __name__ == "__main__":
    main()
