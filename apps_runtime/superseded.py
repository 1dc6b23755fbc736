"""Warm workers of app versions no longer active, retired in every process, not only the deploying one.

A deploy, rollback or undeploy retires the deploying process's workers of the app on commit
(``deploy._drain_on_commit``); other server processes and replicas learn of it from the database. A worker
never serves a call of another version (workers are keyed by version), but until retired it holds its
memory, so each process retires them:

* when it next loads the app (``dispatch.load_app``, whose cache every deploy of the tenant invalidates):
  the app's other versions, at once, without a query (``dispatch.retire_other_versions``);
* every ``SANDBOX_SUPERSEDED_CHECK_S`` seconds (the server's lifespan task, ``retire_forever``; in a Celery
  worker's pool processes, which have no lifespan, a ``Sweeper`` thread): one query for the active versions
  of the apps it keeps workers of, and none at all while it keeps none.
"""

from __future__ import annotations

import logging
import threading

import anyio
from django.conf import settings
from django.db import close_old_connections

from apps_runtime.dispatch import warm_key
from apps_runtime.models import App
from apps_runtime.sandbox import Sandbox, get_sandbox

logger = logging.getLogger("apps_runtime.superseded")


def _parse(key: str) -> tuple[int, int] | None:
    """(tenant id, app id) of a ``dispatch.warm_key``; None for a key of another shape."""
    parts = key.split(":")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return None
    return int(parts[0]), int(parts[1])


def retire_superseded(sandbox: Sandbox | None = None) -> int:
    """Retire the warm workers of ``sandbox`` (default: this process's) whose app version is not its app's
    active one any more (or whose app is undeployed or gone). Returns how many idle workers were retired.
    """
    box = sandbox or get_sandbox()
    apps = {parsed for parsed in map(_parse, box.warm_keys()) if parsed is not None}
    if not apps:
        return 0
    active = dict(
        App.all_tenants.filter(pk__in={app for _, app in apps}).values_list("pk", "active_version_id")
    )
    retired = 0
    for tenant_id, app_id in apps:
        version_id = active.get(app_id)
        current = warm_key(tenant_id, app_id, version_id) if version_id is not None else ""
        retired += box.supersede_workers(warm_key(tenant_id, app_id), current)
    return retired


def _retire_in_thread() -> None:
    close_old_connections()
    try:
        retire_superseded()
    finally:
        close_old_connections()


async def retire_forever() -> None:
    """The server's lifespan task: ``retire_superseded`` every ``SANDBOX_SUPERSEDED_CHECK_S`` seconds."""
    failing = False
    while True:
        await anyio.sleep(settings.SANDBOX_SUPERSEDED_CHECK_S)
        try:
            await anyio.to_thread.run_sync(_retire_in_thread)
        except Exception as err:  # a lost database must not end the server's lifespan
            # The traceback once per outage, not every few seconds (and on CPython 3.11 formatting one
            # parses source with ast, which is not thread-safe: gh-106905).
            if failing:
                logger.warning("superseded-version check still failing: %s", type(err).__name__)
            else:
                logger.exception("Cannot check the sandbox's warm workers for superseded app versions")
            failing = True
        else:
            failing = False


class Sweeper(threading.Thread):
    """``retire_superseded`` every ``interval_s`` (default ``SANDBOX_SUPERSEDED_CHECK_S``) on a daemon
    thread, for processes without the server's lifespan (a Celery worker's pool processes); idle workers past
    their idle time are recycled there too (``Sandbox.pool_stats`` does it), as the server's sampler does.
    """

    def __init__(self, interval_s: float | None = None):
        super().__init__(name="sandbox-superseded-sweeper", daemon=True)
        self.interval_s = interval_s
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval_s or settings.SANDBOX_SUPERSEDED_CHECK_S):
            try:
                _retire_in_thread()
                get_sandbox().pool_stats()
            except Exception:  # a lost database must not end the sweeps
                logger.exception("Cannot check the sandbox's warm workers for superseded app versions")
