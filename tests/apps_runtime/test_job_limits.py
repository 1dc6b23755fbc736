"""Runaway job chains: depth and per-tenant caps, no recursion in-process, runs never left running.

A handler that enqueues its own route makes a chain (or, enqueuing twice, an exponential tree). With no
broker the runs execute in-process; they must run one after another, never nested inside each other.
"""

from __future__ import annotations

import itertools

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps_runtime.jobs import execute, runs
from apps_runtime.jobs.enqueue import check_caps
from apps_runtime.jobs.exceptions import JobEnqueueLimit
from apps_runtime.models import App, HandlerError, JobRun, Record
from apps_runtime.tasks import run_job

from .conftest import (
    JOB_HANDLERS,
    JOB_SETTINGS,
    as_json,
    jobs_manifest,
    restore_broker,
    settle_in_process_runs,
    use_broker,
)

pytestmark = pytest.mark.django_db(transaction=True)

CHAIN_HANDLERS = {
    **JOB_HANDLERS,
    # Enqueues itself (``fanout`` times) and notes how far it got, or the limit that stopped it.
    "server/chain.py": """
from platform_sdk import LimitExceeded

def handle(request):
    link = request.body.get("link", 1)
    try:
        for _ in range(request.body.get("fanout", 1)):
            request.enqueue("POST /jobs/chain", {"link": link + 1, "fanout": request.body.get("fanout", 1)})
    except LimitExceeded as err:
        request.records.create("notes", {"text": f"stopped at {link}: {err.code}: {err}"})
        return {"stopped": link}
    request.records.create("notes", {"text": f"link {link}"})
    return {"link": link}
""",
}


def chain_manifest() -> dict:
    manifest = jobs_manifest()
    manifest["routes"]["POST /jobs/chain"] = {"handler": "server/chain.py", "auth": "internal"}
    return manifest


@pytest.fixture(autouse=True)
def in_process(settings):
    """No broker: tasks run in-process, as in the embedded default."""
    for key, value in JOB_SETTINGS.items():
        setattr(settings, key, value)
    old = use_broker(eager=True, queue=None)
    yield
    restore_broker(old)


@pytest.fixture
def chores(acme, deploy):
    deploy(acme, chain_manifest(), CHAIN_HANDLERS)
    return acme


@pytest.fixture
def kick(client, chores, make_token):
    """POST /kick as the writer: the handler enqueues ``route`` with ``payload``."""
    _, raw = make_token(chores, "writer")

    def post(route: str, payload: dict | None = None, path: str = "/t/acme/apps/chores/kick"):
        return client.post(
            path,
            {"route": route, "payload": payload or {}, "count": 5},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )

    return post


@pytest.fixture
def kick_as(client, chores, make_token):
    """POST /kick-many as ``username``: the handler enqueues runs until a cap refuses one."""

    def post(username: str):
        raw = make_token(chores, username)[1]
        return client.post(
            "/t/acme/apps/chores/kick-many",
            {"count": 5},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )

    return post


def note_texts(tenant) -> list[str]:
    return sorted(r.data["text"] for r in Record.objects.for_tenant(tenant).filter(collection="notes"))


def test_a_self_enqueuing_handler_stops_at_the_chain_depth_cap_without_recursion(kick, chores, settings):
    settings.JOBS_MAX_CHAIN_DEPTH = 8
    response = kick("POST /jobs/chain")

    assert response.status_code == 202  # the request answers at once; its runs go on in the background
    settle_in_process_runs()
    chain = list(JobRun.objects.for_tenant(chores).order_by("depth"))
    assert [run.depth for run in chain] == list(range(1, 9))
    assert all(run.status == "succeeded" and run.attempts == 1 for run in chain)
    # Each run started after the one that queued it had finished: one after another, never nested.
    assert all(child.started_at >= parent.finished_at for parent, child in itertools.pairwise(chain))
    texts = note_texts(chores)
    assert [t for t in texts if t.startswith("link")] == sorted(f"link {n}" for n in range(1, 8))
    [stopped] = [t for t in texts if t.startswith("stopped")]
    assert stopped.startswith("stopped at 8: limit: ") and "8" in stopped.removeprefix("stopped at 8")


def test_an_exponential_job_tree_is_cut_at_the_depth_cap(kick, chores, settings):
    settings.JOBS_MAX_CHAIN_DEPTH = 4
    assert kick("POST /jobs/chain", {"fanout": 2}).status_code == 202
    settle_in_process_runs()

    tree = JobRun.objects.for_tenant(chores)
    assert tree.count() == 1 + 2 + 4 + 8
    assert set(tree.values_list("status", flat=True)) == {"succeeded"}
    assert max(tree.values_list("depth", flat=True)) == 4


def test_a_tenant_may_have_only_so_many_unfinished_runs(kick, kick_as, chores, settings, monkeypatch):
    """Each member may hold their share (here 1 of 3); the tenant's cap is reached only by several."""
    settings.JOBS_MAX_QUEUED_RUNS_PER_TENANT, settings.TENANT_MEMBER_SHARE_PERCENT = 3, 50
    sent: list[str] = []
    monkeypatch.setattr(
        "apps_runtime.jobs.queue.runs._send", lambda run_id, countdown, parent=None: sent.append(run_id)
    )

    response = kick("", path="/t/acme/apps/chores/kick-many")
    assert response.status_code == 429
    assert as_json(response)["error"] == (
        "you already have 1 background runs waiting or running, your share of this tenant's unfinished runs"
    )
    for member in ("admin", "reader"):
        assert kick_as(member).status_code == 429  # each queued their one
    response = kick_as("member")
    assert as_json(response)["error"] == "this tenant already has 3 background runs waiting or running"
    assert JobRun.objects.for_tenant(chores).filter(status="queued").count() == 3 and len(sent) == 3

    # Once they have run, the tenant may queue again.
    monkeypatch.undo()
    for run_id in sent:
        execute.execute_run(run_id)
    assert kick("POST /jobs/write").status_code == 202


def test_a_cap_leaves_room_below_its_limit_refuses_at_it_and_counts_only_what_it_names(chores, settings):
    """Finished runs count against the call's tree, not the tenant's unfinished ones; each check reads
    one row at a bounded offset, unsorted and uncounted, however many runs the tenant holds."""
    settings.JOBS_MAX_QUEUED_RUNS_PER_TENANT, settings.JOBS_MAX_RUNS_PER_CALL = 4, 3
    app = App.objects.for_tenant(chores).get(name="chores")
    numbers = itertools.count()

    def add(count: int, status: str, origin: str = "elsewhere") -> None:
        row = {
            "tenant": chores,
            "app": app,
            "version_number": 1,
            "route_key": "POST /jobs/write",
            "caller": {},
        }
        JobRun.objects.bulk_create(
            JobRun(run_id=f"run_{next(numbers)}", status=status, origin=origin, **row) for _ in range(count)
        )

    add(20, "succeeded")
    add(3, "queued")
    add(2, "succeeded", origin="tree")
    with CaptureQueriesContext(connection) as seen:
        check_caps(chores.pk, 1, origin="tree", member="someone")  # 3 of 4 unfinished, 2 of 3 in the tree
    assert len(seen) == 5
    assert all("LIMIT 1" in q["sql"] and "ORDER BY" not in q["sql"] for q in seen)
    assert all("COUNT" not in q["sql"].upper() for q in seen)

    add(1, "succeeded", origin="tree")
    with pytest.raises(JobEnqueueLimit) as tree_full:
        check_caps(chores.pk, 1, origin="tree")
    add(1, "running")
    with pytest.raises(JobEnqueueLimit) as tenant_full:
        check_caps(chores.pk, 1)
    assert (tree_full.value.kind, tenant_full.value.kind) == ("per_origin", "tenant_queue")


def test_a_run_whose_machinery_fails_ends_failed_with_an_error_id(kick, chores, monkeypatch):
    """A run that cannot be rebuilt (here a caller snapshot the platform cannot read) is not left running."""
    monkeypatch.setattr("apps_runtime.jobs.queue.runs._send", lambda run_id, countdown, parent=None: None)
    run_id = as_json(kick("POST /jobs/write"))["run_id"]
    JobRun.objects.for_tenant(chores).filter(run_id=run_id).update(caller={"roles": 7})
    monkeypatch.undo()

    run_job.delay(run_id)

    run = JobRun.objects.for_tenant(chores).get(run_id=run_id)
    assert run.status == "failed" and run.attempts == 1 and run.error_code == "platform_error"
    error = HandlerError.objects.for_tenant(chores).get(error_id=run.error_id)
    assert error.kind == "platform_error" and "roles" not in error.trace  # no internals for tenants
    assert run.attempt_log[0]["error_id"] == run.error_id
    # The reaper has nothing to take back: the run is finished, not running.
    assert runs.reap(run.finished_at.replace(year=run.finished_at.year + 1)).requeued == []


def test_a_run_that_fails_before_it_starts_ends_failed_not_queued(kick, chores, monkeypatch):
    monkeypatch.setattr("apps_runtime.jobs.queue.runs._send", lambda run_id, countdown, parent=None: None)
    run_id = as_json(kick("POST /jobs/write"))["run_id"]
    monkeypatch.undo()

    def database_gone(tenant, name):
        raise RuntimeError("the connection to the database was lost")

    monkeypatch.setattr(execute, "load_app", database_gone)
    run_job.delay(run_id)

    run = JobRun.objects.for_tenant(chores).get(run_id=run_id)
    assert run.status == "failed" and run.attempts == 0 and run.error_code == "platform_error"
    assert HandlerError.objects.for_tenant(chores).filter(error_id=run.error_id).exists()


def test_the_runs_one_call_starts_are_capped_in_all_not_only_in_depth(kick, chores, settings):
    """Issue 26 item 1: a route enqueuing itself many times per run made thousands of runs from one call."""
    settings.JOBS_MAX_CHAIN_DEPTH, settings.JOBS_MAX_RUNS_PER_CALL = 8, 10
    assert kick("POST /jobs/chain", {"fanout": 3}).status_code == 202
    settle_in_process_runs()

    tree = JobRun.objects.for_tenant(chores)
    assert tree.count() == 10  # 3^8 runs without the cap
    assert len(set(tree.values_list("origin", flat=True))) == 1
    assert set(tree.values_list("status", flat=True)) == {"succeeded"}
    stopped = [t for t in note_texts(chores) if t.startswith("stopped")]
    assert stopped and all("may be at most 10" in t for t in stopped)
    # Another call starts a tree of its own.
    assert kick("POST /jobs/write").status_code == 202


def test_a_tenant_queues_only_so_many_runs_a_minute(kick, kick_as, chores, settings, monkeypatch):
    settings.JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE, settings.TENANT_MEMBER_SHARE_PERCENT = 3, 50
    monkeypatch.setattr("apps_runtime.jobs.queue.runs._send", lambda run_id, countdown, parent=None: None)

    response = kick("", path="/t/acme/apps/chores/kick-many")
    assert response.status_code == 429
    assert as_json(response)["error"] == (
        "you already queued 1 background runs in the last minute, your share of this tenant's runs a minute"
    )
    assert kick_as("admin").status_code == kick_as("reader").status_code == 429
    response = kick_as("member")
    assert as_json(response)["error"] == "this tenant already queued 3 background runs in the last minute"
    assert JobRun.objects.for_tenant(chores).count() == 3


def test_in_process_runs_go_on_after_the_request_that_queued_them_has_answered(kick, chores):
    """With no broker, a chain runs on the run threads, not in the request's thread: the call answers
    at once instead of holding its thread (and its tenant's share) while the runs go on."""
    response = kick("POST /jobs/slow", {"seconds": 2})
    assert response.status_code == 202
    run = JobRun.objects.for_tenant(chores).get(run_id=as_json(response)["run_id"])
    assert not run.is_finished
    settle_in_process_runs()
    run.refresh_from_db()
    assert run.status == "succeeded"
