"""Warm workers of an app version that a deploy, rollback or undeploy made in *another* process superseded are
retired here too, without waiting for their idle time: on the app's next load, and by the periodic sweep.

"Another process" here: the deploy's commit callbacks do not run in this test (no
``django_capture_on_commit_callbacks``), so the deploying process's own drain never reaches this sandbox,
exactly as for a deploy made by another server, replica or ``manage.py deploy``.
"""

import time

import pytest

from apps_runtime.deploy import undeploy_app
from apps_runtime.models import App
from apps_runtime.sandbox import get_sandbox
from apps_runtime.superseded import Sweeper, retire_superseded

pytestmark = pytest.mark.django_db

COUNTER = "CALLS = []\n\ndef handle(request):\n    CALLS.append(1)\n    return {'calls': len(CALLS)}\n"
FILES = {"server/count.py": COUNTER}
MANIFEST = {"name": "counter", "routes": {"GET /count": {"handler": "server/count.py", "auth": "public"}}}


def _count(client) -> dict:
    response = client.get("/t/acme/apps/counter/count")
    assert response.status_code == 200, response.content
    return response.json()


def _superseded() -> int:
    return get_sandbox().pool_stats()["recycles"]["superseded"]


def _workers_of(tenant) -> set[str]:
    """The warm keys of the counter app's workers (of any version)."""
    app = App.objects.for_tenant(tenant).get(name="counter")
    return {key for key in get_sandbox().warm_keys() if key.startswith(f"{tenant.pk}:{app.pk}:")}


def test_the_sweep_retires_a_superseded_versions_idle_worker_without_a_call(acme, deploy, client):
    deploy(acme, MANIFEST, FILES)
    assert [_count(client)["calls"] for _ in range(2)] == [1, 2]
    old_keys = _workers_of(acme)
    assert len(old_keys) == 1
    retire_superseded()  # the current version's worker stays
    assert _workers_of(acme) == old_keys
    before = _superseded()

    deploy(acme, MANIFEST, FILES)  # a new version, committed "elsewhere": no drain in this process

    assert _workers_of(acme) == old_keys  # still held: nothing here has heard of the deploy yet
    # At least ours: ids rolled back by earlier tests come again, and so may their workers' keys.
    assert retire_superseded() >= 1
    assert _superseded() >= before + 1
    assert _workers_of(acme) == set()


def test_the_apps_next_call_retires_its_other_versions_workers_and_runs_the_new_version(acme, deploy, client):
    deploy(acme, MANIFEST, FILES)
    old = [_count(client) for _ in range(2)]
    assert [answer["calls"] for answer in old] == [1, 2]
    before = _superseded()

    deploy(acme, MANIFEST, FILES)
    new = _count(client)

    assert new["calls"] == 1  # the new version's worker: the old one's globals are not seen
    assert _superseded() >= before + 1  # and the old version's worker is gone, not left to idle out
    assert len(_workers_of(acme)) == 1


def test_an_undeploy_made_elsewhere_retires_every_worker_of_the_app(acme, deploy, client):
    deploy(acme, MANIFEST, FILES)
    _count(client)
    assert len(_workers_of(acme)) == 1
    before = _superseded()

    undeploy_app(acme, "counter", acting_user=None)

    assert retire_superseded() >= 1
    assert _superseded() >= before + 1
    assert _workers_of(acme) == set()
    assert client.get("/t/acme/apps/counter/count").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_job_workers_sweeper_thread_retires_a_superseded_versions_worker(acme, deploy, client, monkeypatch):
    """A Celery worker's pool process has no lifespan: its ``Sweeper`` thread (started on
    ``worker_process_init``) does the sweep, on a connection of its own (so the deploys are committed here,
    and the deploying process's own drain on commit is turned off: the deploy is another process's).
    """
    monkeypatch.setattr("apps_runtime.deploy._drain_on_commit", lambda app: None)
    deploy(acme, MANIFEST, FILES)
    _count(client)
    old_keys = _workers_of(acme)
    sweeper = Sweeper(interval_s=0.05)
    sweeper.start()
    try:
        before = _superseded()
        deploy(acme, MANIFEST, FILES)
        deadline = time.monotonic() + 20
        while _workers_of(acme) == old_keys and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        sweeper.stopped.set()
        sweeper.join(timeout=10)
    assert _workers_of(acme) == set()
    assert _superseded() >= before + 1
