"""A redeploy made by another process (here ``manage.py shell``, as a second server, replica or the deploy
command would) retires a running server's warm worker of the old version within seconds, with no call to the
app: the server's sweep, not the worker's idle timeout (300 s).
"""

import shutil
import tempfile
import time
from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.platform_process import PlatformProcess, migrated_database

REDEPLOY = (
    "import json; from apps_runtime.deploy import deploy_bundle; "
    "from apps_runtime.manifest import bundle_from_mapping; from tenants.models import Tenant; "
    "from tests.support.apps import HANDLERS, cases_manifest; "
    "bundle = bundle_from_mapping(cases_manifest(), HANDLERS); "
    "result = deploy_bundle(Tenant.objects.get(slug='acme'), bundle, acting_user=None); "
    "print(json.dumps(result.version.number))"
)


def _warm_workers(base_url: str) -> float:
    page = httpx2.get(f"{base_url}/metrics", timeout=30)
    assert page.status_code == 200, page.text
    for family in text_string_to_metric_families(page.text):
        for sample in family.samples:
            if sample.name == "lcp_sandbox_warm_workers":
                return sample.value
    raise AssertionError("no lcp_sandbox_warm_workers gauge")


def _wait_for_workers(base_url: str, wanted: float, timeout_s: float = 30.0) -> float:
    """The gauge (sampled every few seconds) once it reads ``wanted``, or its last reading at the deadline."""
    deadline = time.monotonic() + timeout_s
    seen = _warm_workers(base_url)
    while seen != wanted and time.monotonic() < deadline:
        time.sleep(0.2)
        seen = _warm_workers(base_url)
    return seen


@pytest.fixture
def platform():
    workdir = Path(tempfile.mkdtemp(prefix="superseded-"))
    server = PlatformProcess(
        workdir,
        migrated_database(workdir).url,
        env={"SANDBOX_SUPERSEDED_CHECK_S": "0.5", "SANDBOX_WARM_IDLE_S": "300"},
    )
    try:
        server.seed()
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_redeploy_from_another_process_retires_the_servers_old_worker_without_a_call(platform):
    ping = f"{platform.base_url}/t/acme/apps/cases/ping"
    assert httpx2.get(ping, timeout=30).status_code == 200
    assert _wait_for_workers(platform.base_url, 1.0) == 1.0  # the old version's worker, idle

    assert platform.python(REDEPLOY) == 2  # committed by another process: the server heard nothing

    assert _wait_for_workers(platform.base_url, 0.0) == 0.0
    assert httpx2.get(ping, timeout=30).status_code == 200  # the new version runs, in a new worker
