"""App jobs end to end, each scenario twice: in-process (eager) and on a real Celery worker over Redis.

The worker variant needs PostgreSQL (see conftest); the eager variant asserts the same behaviour.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from apps_runtime.dispatch import load_app
from apps_runtime.jobs.enqueue import enqueue_run
from apps_runtime.jobs.queue import send_on_commit
from apps_runtime.jobs.schedule import minute_of
from apps_runtime.models import HandlerError, JobRun, Record
from apps_runtime.records import RecordsScope
from tenants.callers import caller_for
from tenants.scoping import access_user

from .conftest import (
    JOB_HANDLERS,
    WRITER_ROLE,
    JobsHarness,
    as_json,
    jobs_manifest,
    restore_broker,
    use_broker,
    wait_until,
)

KICK = "/t/acme/apps/chores/kick"


def at_minutes(*minutes: datetime) -> str:
    """A cron expression due at exactly these minutes of any hour (tests pick minutes a few apart)."""
    return f"{','.join(str(m.minute) for m in minutes)} * * * *"


def notes(tenant) -> list[dict]:
    return [r.data for r in Record.objects.for_tenant(tenant).filter(collection="notes").order_by("id")]


@pytest.fixture
def kick(client, acme, make_token):
    """POST /kick as ``username``: the handler enqueues ``route`` with ``payload``; returns the run id."""

    def run(username: str, route: str, payload: dict | None = None) -> str:
        _, raw = make_token(acme, username)
        response = client.post(
            KICK,
            {"route": route, "payload": payload or {}},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )
        assert response.status_code == 202, response.content
        return as_json(response)["run_id"]

    return run


def test_a_scheduled_job_fires_once_as_its_service_principal(jobs, acme, deploy_jobs):
    due = minute_of(timezone.now()) + timedelta(minutes=2)
    spec = {"route": "POST /jobs/write", "schedule": at_minutes(due), "runAs": f"role:{WRITER_ROLE}"}
    deploy_jobs(acme, {"nightly": spec})

    jobs.dispatch(due)
    jobs.dispatch(due)  # a second beat, or the same tick delivered twice

    [run] = jobs.finished_runs(acme, 1, job="nightly")
    assert run.status == "succeeded" and run.scheduled_for == due and run.attempts == 1
    assert run.caller["username"] == "job:chores/nightly"
    assert run.caller["roles"] == [WRITER_ROLE] and run.caller["is_superuser"] is False
    assert notes(acme) == [{"text": "hello", "by": "job:chores/nightly"}]
    # Dispatching that minute again (a late tick, a restarted beat) never fires it twice.
    jobs.dispatch(due + timedelta(minutes=1))
    jobs.finished_runs(acme, 1, job="nightly")


@pytest.mark.beat
def test_beat_fires_a_scheduled_job(jobs, acme, deploy_jobs):
    spec = {"route": "POST /jobs/write", "schedule": "* * * * *", "runAs": f"role:{WRITER_ROLE}"}
    deploy_jobs(acme, {"every_minute": spec})
    if jobs.eager:
        jobs.dispatch()  # what beat sends; the worker variant runs real beat (ticking every second)

    def first_run():
        runs = JobRun.objects.for_tenant(acme).filter(job="every_minute", status="succeeded")
        return runs.order_by("scheduled_for").first()

    run = wait_until(first_run, "beat to fire the job")
    assert run.scheduled_for >= minute_of(run.enqueued_at) - timedelta(minutes=1)
    assert run.caller["username"] == "job:chores/every_minute"


def test_an_enqueued_run_executes_as_its_caller(jobs, acme, deploy_jobs, kick):
    deploy_jobs(acme)

    allowed = jobs.finished(acme, kick("writer", "POST /jobs/write", {"text": "from writer"}))
    assert allowed.status == "succeeded" and allowed.result_status == 200
    assert allowed.caller["username"] == "writer" and allowed.caller["roles"] == [WRITER_ROLE]
    assert allowed.job == "" and allowed.scheduled_for is None

    # The reader may run the app but not write notes: neither may the run it queued.
    refused = jobs.finished(acme, kick("reader", "POST /jobs/write", {"text": "from reader"}))
    assert refused.status == "failed" and refused.result_status == 403 and refused.attempts == 1
    assert refused.caller["username"] == "reader"
    assert HandlerError.objects.for_tenant(acme).filter(error_id=refused.error_id).exists()
    assert notes(acme) == [{"text": "from writer", "by": "writer"}]


def test_a_handler_answering_503_is_retried_with_backoff_then_fails_with_an_error_id(
    jobs, acme, deploy_jobs, kick
):
    deploy_jobs(acme)
    run = jobs.finished(acme, kick("writer", "POST /jobs/unavailable"))

    assert run.status == "failed" and run.attempts == 3 and run.result_status == 503
    assert run.error_id.startswith("err_")
    log = run.attempt_log
    assert [entry["result_status"] for entry in log] == [503, 503, 503]
    assert len({entry["error_id"] for entry in log}) == 3 and log[-1]["error_id"] == run.error_id
    assert HandlerError.objects.for_tenant(acme).filter(error_id=run.error_id, kind="error_status").exists()
    if not jobs.eager:  # in-process retries run at once; a worker waits 0.2 s, then 0.4 s
        starts = [datetime.fromisoformat(entry["started_at"]) for entry in log]
        ends = [datetime.fromisoformat(entry["finished_at"]) for entry in log]
        assert (starts[1] - ends[0]).total_seconds() >= 0.2
        assert (starts[2] - ends[1]).total_seconds() >= 0.4


def test_a_handler_that_times_out_is_retried_then_timed_out(jobs, acme, deploy_jobs, kick):
    deploy_jobs(acme)
    run = jobs.finished(acme, kick("writer", "POST /jobs/loop"))

    assert run.status == "timed_out" and run.attempts == 3
    assert run.error_code == "handler_timeout" and run.result_status == 504
    error = HandlerError.objects.for_tenant(acme).get(error_id=run.error_id)
    assert error.kind == "handler_timeout" and error.route_key == "POST /jobs/loop"


def test_a_crashing_handler_fails_at_once_with_its_error_id(jobs, acme, deploy_jobs, kick):
    deploy_jobs(acme)
    run = jobs.finished(acme, kick("writer", "POST /jobs/boom"))

    assert run.status == "failed" and run.attempts == 1 and run.error_code == "handler_error"
    error = HandlerError.objects.for_tenant(acme).get(error_id=run.error_id)
    assert "about to fail" in error.logs and "RuntimeError" in error.trace


def test_a_redeploy_removing_a_job_stops_its_schedule(jobs, acme, deploy_jobs):
    first = minute_of(timezone.now()) + timedelta(minutes=1)
    second = first + timedelta(minutes=1)
    spec = {"route": "POST /jobs/write", "schedule": at_minutes(first, second), "runAs": "role:case_writer"}
    deploy_jobs(acme, {"keeper": spec, "doomed": spec})
    jobs.dispatch(first)
    jobs.finished_runs(acme, 1, job="keeper")
    jobs.finished_runs(acme, 1, job="doomed")

    deploy_jobs(acme, {"keeper": spec})
    jobs.dispatch(second)

    # Once the keeper's second minute has run, that dispatch is over: the removed job did not fire.
    keeper = jobs.finished_runs(acme, 2, job="keeper")
    assert [r.scheduled_for for r in keeper] == [first, second]
    assert JobRun.objects.for_tenant(acme).filter(job="doomed").count() == 1


def test_a_worker_killed_mid_run_does_not_lose_the_run(jobs, acme, deploy_jobs):
    deploy_jobs(acme)
    loaded = load_app(acme, "chores")
    writer = caller_for(acme, access_user("writer"))
    scope = RecordsScope(tenant_id=acme.pk, app_id=loaded.app.pk, compiled=loaded.compiled, caller=writer)
    run = enqueue_run(scope, "POST /jobs/slow", {"seconds": 2})
    if not jobs.eager:
        send_on_commit([run.run_id])

    lost = jobs.lose_worker_mid_run(acme, run)
    assert lost.status == "running" and lost.attempts == 1
    jobs.reap(lost.deadline + timedelta(seconds=1))  # the reaper's next tick after the deadline

    done = jobs.finished(acme, run.run_id)
    assert done.status == "succeeded" and done.attempts == 2
    assert done.attempt_log[0]["error_code"] == "worker_lost" and done.attempt_log[0]["error_id"]
    assert notes(acme) == [{"text": "slow", "by": "writer"}]


# --- fault injection: SIGKILL the worker mid-run -------------------------------------------------

TWO_STEP = """
import time

def handle(request):
    request.records.create("notes", {"text": "started", "by": request.user["username"]})
    time.sleep(request.body.get("seconds", 2))
    request.records.create("notes", {"text": "done", "by": request.user["username"]})
    return {"done": True}
"""


@pytest.fixture
def worker_with_beat(transactional_db, settings, celery_worker):
    """A real worker with beat (the dispatcher and the reaper tick every second), this process on Redis."""
    celery_worker.start(beat=True)
    old = use_broker(eager=False, queue=celery_worker.queue)
    try:
        yield JobsHarness("worker", celery_worker)
    finally:
        restore_broker(old)
        celery_worker.stop()


@pytest.mark.slow
def test_a_run_whose_worker_is_killed_mid_handler_completes_exactly_once(
    worker_with_beat, acme, deploy, client, make_token
):
    """The documented contract: at least once, completed once.

    The task is acknowledged only once it has run (``acks_late``); a worker killed mid-run loses the
    attempt, not the run: the reaper takes the attempt back after its deadline and a new worker runs
    it again. What the lost attempt wrote stays (each records call commits on its own) and the run is
    re-run from the start, so handlers should be idempotent. The run itself is never half-finished:
    one attempt ends it, and the lost one is in its log with an error id.
    """
    manifest = jobs_manifest()
    manifest["routes"]["POST /jobs/two-step"] = {
        "handler": "server/two_step.py",
        "auth": "internal",
        "timeoutMs": 4000,
    }
    deploy(acme, manifest, {**JOB_HANDLERS, "server/two_step.py": TWO_STEP})
    _, raw = make_token(acme, "writer")
    response = client.post(
        KICK,
        {"route": "POST /jobs/two-step", "payload": {"seconds": 2}},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 202  # acknowledged: the caller holds a run id
    run_id = as_json(response)["run_id"]

    # Mid-handler: its first write is committed, its second not yet made.
    try:
        wait_until(lambda: [n["text"] for n in notes(acme)] == ["started"], "the handler's first write")
    except AssertionError as err:
        raise AssertionError(f"{err}\n--- worker log ---\n{worker_with_beat.worker.log_tail()}") from None
    worker_with_beat.worker.kill()
    worker_with_beat.worker.start(beat=True)

    run = worker_with_beat.finished(acme, run_id)
    assert run.status == "succeeded" and run.attempts == 2
    lost, completed = run.attempt_log
    assert lost["error_code"] == "worker_lost" and lost["error_id"].startswith("err_")
    assert HandlerError.objects.for_tenant(acme).get(error_id=lost["error_id"]).kind == "worker_lost"
    assert completed["result_status"] == 200 and completed["error_id"] == ""
    # At least once: the lost attempt's first write stays; the run's work completed exactly once.
    assert sorted(n["text"] for n in notes(acme)) == ["done", "started", "started"]
    assert JobRun.objects.for_tenant(acme).count() == 1
