"""App jobs piece by piece: principals, job rows, the dispatcher, enqueue, the run state machine, reaper, API.

End-to-end scenarios (eager and on a real worker) are in test_jobs_worker.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.conf import settings
from django.db import IntegrityError, transaction

from apps_runtime.auth_expr import parse_auth
from apps_runtime.deploy import rollback_app, undeploy_app
from apps_runtime.dispatch import load_app
from apps_runtime.jobs import clock, execute, runs, schedule
from apps_runtime.jobs.enqueue import enqueue_run
from apps_runtime.jobs.principals import job_principal
from apps_runtime.jobs.queue import send_on_commit
from apps_runtime.models import HandlerError, Job, JobRun
from apps_runtime.records import RecordsScope
from lowcode_platform.celery import app as celery_app
from tenants.callers import Caller, caller_for
from tenants.models import Membership
from tenants.scoping import access_user

from .conftest import (
    JOB_HANDLERS,
    JOB_SETTINGS,
    WRITER_ROLE,
    as_json,
    jobs_manifest,
    restore_broker,
    settle_in_process_runs,
    use_broker,
    wait_until,
)

# Committed for real, so runs are sent (or run in-process) on commit as in production.
pytestmark = pytest.mark.django_db(transaction=True)

WRITE_JOB = {"route": "POST /jobs/write", "schedule": "0 3 * * *", "runAs": f"role:{WRITER_ROLE}"}


@pytest.fixture(autouse=True)
def job_settings(settings):
    """The worker's job settings, and tasks in-process (as with no broker) whatever the environment."""
    for key, value in JOB_SETTINGS.items():
        setattr(settings, key, value)
    old = use_broker(eager=True, queue=None)
    yield
    restore_broker(old)


@pytest.fixture
def sent(monkeypatch):
    """Record run_job sends instead of running them."""
    calls: list[tuple[str, float | None]] = []
    monkeypatch.setattr(
        "apps_runtime.jobs.queue.runs._send",
        lambda run_id, countdown, parent=None: calls.append((run_id, countdown)),
    )
    return calls


def queue_run(tenant, username: str, route: str, body: dict | None = None) -> JobRun:
    loaded = load_app(tenant, "chores")
    caller = caller_for(tenant, access_user(username))
    scope = RecordsScope(tenant_id=tenant.pk, app_id=loaded.app.pk, compiled=loaded.compiled, caller=caller)
    return enqueue_run(scope, route, body)


# --- who a run acts as -------------------------------------------------------------------------


def test_a_job_principal_holds_exactly_its_roles_and_is_never_a_superuser():
    principal = job_principal(7, "chores", "nightly", "role:case_writer,archivist")
    assert principal.is_authenticated and principal.is_member and principal.is_service
    assert not principal.is_superuser and not principal.is_tenant_admin and principal.user_id is None
    assert principal.roles == {"case_writer", "archivist"}
    assert parse_auth("role:archivist").allows(principal) and parse_auth("user").allows(principal)
    assert not parse_auth("role:case_reader").allows(principal)
    assert not parse_auth("internal").allows(principal)
    assert principal.as_handler_user() == {
        "username": "job:chores/nightly",
        "roles": ["archivist", "case_writer"],
        "superuser": False,
    }


def test_anonymous_callers_stay_anonymous():
    anonymous = Caller(tenant_id=1, is_member=True, roles=frozenset({"case_writer"}))
    assert not anonymous.is_authenticated and anonymous.as_handler_user() is None
    assert not parse_auth("role:case_writer").allows(anonymous)


def test_a_caller_snapshot_rebuilds_the_same_caller_in_the_runs_tenant():
    caller = Caller(
        tenant_id=3,
        user_id=9,
        username="ann",
        is_member=True,
        is_superuser=True,
        is_tenant_admin=True,
        roles=frozenset({"b", "a"}),
        token_id=4,
        read_only=True,
    )
    data = caller.to_snapshot()
    assert "tenant_id" not in data and data["roles"] == ["a", "b"]
    assert Caller.from_snapshot(3, data) == caller
    assert Caller.from_snapshot(5, data).tenant_id == 5


# --- job rows follow the active version --------------------------------------------------------


def job_names(tenant) -> list[str]:
    return sorted(Job.objects.for_tenant(tenant).values_list("name", flat=True))


def test_deploys_rollbacks_and_undeploys_replace_the_schedules(acme, deploy):
    deploy(
        acme,
        jobs_manifest({"nightly": WRITE_JOB, "hourly": {**WRITE_JOB, "schedule": "0 * * * *"}}),
        JOB_HANDLERS,
    )
    assert job_names(acme) == ["hourly", "nightly"]
    job = Job.objects.for_tenant(acme).get(name="hourly")
    assert (job.route_key, job.schedule, job.run_as) == ("POST /jobs/write", "0 * * * *", "role:case_writer")

    deploy(acme, jobs_manifest({"nightly": WRITE_JOB}), JOB_HANDLERS)
    assert job_names(acme) == ["nightly"]
    rollback_app(acme, "chores", acting_user=None)
    assert job_names(acme) == ["hourly", "nightly"]
    undeploy_app(acme, "chores", acting_user=None)
    assert job_names(acme) == []


# --- the dispatcher ----------------------------------------------------------------------------


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture
def scheduled(acme, deploy, sent):
    """The chores app with a job due every 15 minutes, active since 10:02 (UTC)."""
    deploy(acme, jobs_manifest({"quarterly": {**WRITE_JOB, "schedule": "*/15 * * * *"}}), JOB_HANDLERS)
    Job.objects.for_tenant(acme).update(active_since=at("2030-01-01T10:02:30+00:00"))
    return acme


def scheduled_minutes(tenant) -> list[str]:
    rows = JobRun.objects.for_tenant(tenant).exclude(job="").order_by("scheduled_for")
    return [run.scheduled_for.strftime("%H:%M") for run in rows]


def test_the_dispatcher_queues_due_minutes_as_the_jobs_principal(scheduled, sent):
    assert schedule.dispatch_due_jobs(at("2030-01-01T10:14:59+00:00")) == []
    [run_id] = schedule.dispatch_due_jobs(at("2030-01-01T10:15:07+00:00"))
    run = JobRun.objects.for_tenant(scheduled).get(run_id=run_id)
    assert run.status == "queued" and run.job == "quarterly" and run.route_key == "POST /jobs/write"
    assert run.scheduled_for == at("2030-01-01T10:15:00+00:00") and run.version_number == 1
    assert run.caller["username"] == "job:chores/quarterly" and run.caller["is_service"] is True
    assert sent == [(run_id, None)]


def test_each_minute_fires_once_however_often_it_is_dispatched(scheduled, sent):
    schedule.dispatch_due_jobs(at("2030-01-01T10:15:00+00:00"))
    assert schedule.dispatch_due_jobs(at("2030-01-01T10:15:40+00:00")) == []
    assert schedule.dispatch_due_jobs(at("2030-01-01T10:16:00+00:00")) == []
    assert scheduled_minutes(scheduled) == ["10:15"] and len(sent) == 1


def test_two_racing_dispatchers_insert_a_minute_once(scheduled, sent, monkeypatch):
    first = schedule.dispatch_due_jobs(at("2030-01-01T10:15:00+00:00"))
    # The second planned before the first committed: it saw no row, and the constraint drops its insert.
    monkeypatch.setattr(schedule, "_taken", lambda minutes: set())
    assert schedule.dispatch_due_jobs(at("2030-01-01T10:15:00+00:00")) == []
    assert scheduled_minutes(scheduled) == ["10:15"] and sent == [(first[0], None)]


def test_the_database_refuses_a_second_run_of_a_minute(scheduled):
    schedule.dispatch_due_jobs(at("2030-01-01T10:15:00+00:00"))
    run = JobRun.objects.for_tenant(scheduled).get()
    with pytest.raises(IntegrityError), transaction.atomic():
        JobRun.objects.create(
            run_id="run_dup",
            tenant=scheduled,
            app=run.app,
            version_number=1,
            job=run.job,
            route_key=run.route_key,
            caller=run.caller,
            scheduled_for=run.scheduled_for,
        )


def test_a_late_dispatcher_fires_the_minutes_it_missed_but_none_before_activation(scheduled, sent):
    # Ticks stopped at 10:01; the next one, at 10:33, looks back 5 minutes: 10:30 fires, 10:15 is lost.
    schedule.dispatch_due_jobs(at("2030-01-01T10:33:00+00:00"))
    assert scheduled_minutes(scheduled) == ["10:30"]
    # 10:00 is in the window of a 10:04 tick, but the version only became active at 10:02.
    JobRun.objects.for_tenant(scheduled).delete()
    schedule.dispatch_due_jobs(at("2030-01-01T10:04:00+00:00"))
    assert scheduled_minutes(scheduled) == []


def test_the_dispatcher_serves_every_tenant_and_only_active_versions(scheduled, make_tenant, deploy, sent):
    other = make_tenant("other")
    deploy(other, jobs_manifest({"quarterly": {**WRITE_JOB, "schedule": "*/15 * * * *"}}), JOB_HANDLERS)
    Job.objects.for_tenant(other).update(active_since=at("2030-01-01T10:00:00+00:00"))
    schedule.dispatch_due_jobs(at("2030-01-01T10:15:00+00:00"))
    assert scheduled_minutes(scheduled) == ["10:15"] and scheduled_minutes(other) == ["10:15"]

    undeploy_app(other, "chores", acting_user=None)
    schedule.dispatch_due_jobs(at("2030-01-01T10:30:00+00:00"))
    assert scheduled_minutes(scheduled) == ["10:15", "10:30"] and scheduled_minutes(other) == ["10:15"]


def test_beat_runs_the_dispatcher_every_minute_the_reaper_the_mcp_tasks_sweep_and_the_purge():
    entries = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert set(entries) == {
        "apps_runtime.dispatch_due_jobs",
        "apps_runtime.reap_job_runs",
        "mcp_gateway.sweep_tool_tasks",
        "lowcode_platform.purge_expired",
        "agents.sweep_runs",
    }
    assert entries["lowcode_platform.purge_expired"] == 3600.0
    assert str(entries["apps_runtime.dispatch_due_jobs"]).startswith("<crontab: * * * * *")
    import agents.tasks  # noqa: F401
    import apps_runtime.tasks  # noqa: F401  (the worker imports it through autodiscovery)
    import lowcode_platform.tasks  # noqa: F401
    import mcp_gateway.tasks  # noqa: F401

    assert set(entries) <= set(celery_app.tasks)


# --- request.enqueue ---------------------------------------------------------------------------


@pytest.fixture
def kick(client, acme, deploy, make_token):
    """POST /kick (the handler enqueues body.route with body.payload) as ``username``."""
    deploy(acme, jobs_manifest(), JOB_HANDLERS)

    def post(username: str, body: dict):
        _, raw = make_token(acme, username)
        return client.post(
            "/t/acme/apps/chores/kick",
            body,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )

    return post


def test_enqueue_queues_an_internal_route_as_the_caller_and_sends_on_commit(kick, acme, sent):
    response = kick("writer", {"route": "POST /jobs/write", "payload": {"text": "hi"}})
    assert response.status_code == 202
    run = JobRun.objects.for_tenant(acme).get(run_id=as_json(response)["run_id"])
    assert (run.status, run.route_key, run.job) == ("queued", "POST /jobs/write", "")
    assert run.body == {"text": "hi"}
    assert run.caller["username"] == "writer" and run.caller["user_id"] == access_user("writer").pk
    assert sent == [(run.run_id, None)]


def test_runs_are_sent_only_once_their_transaction_commits(acme, deploy, sent):
    deploy(acme, jobs_manifest(), JOB_HANDLERS)
    with transaction.atomic():
        run = queue_run(acme, "writer", "POST /jobs/write")
        send_on_commit([run.run_id])
        assert sent == []
    assert sent == [(run.run_id, None)]


@pytest.mark.parametrize(
    ("route", "payload", "status", "message"),
    [
        ("POST /jobs/nope", {}, 404, "no route 'POST /jobs/nope'"),
        ("POST /kick", {}, 400, "only internal routes run in the background"),
        ("POST /jobs/write", [1, 2], 400, "must be a JSON object"),
    ],
)
def test_enqueue_refuses_other_routes_and_bad_bodies(kick, acme, sent, route, payload, status, message):
    response = kick("writer", {"route": route, "payload": payload})
    assert response.status_code == status
    assert message in response.content.decode()
    assert not JobRun.objects.for_tenant(acme).exists() and sent == []


def test_one_handler_call_may_queue_only_so_many_runs(client, kick, acme, make_token, sent, settings):
    settings.JOBS_MAX_ENQUEUES_PER_CALL = 2
    _, raw = make_token(acme, "writer")
    post = lambda count: client.post(  # noqa: E731
        "/t/acme/apps/chores/kick-many",
        {"count": count},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert post(2).status_code == 202
    response = post(3)
    assert response.status_code == 429 and "at most 2 background runs" in response.content.decode()
    assert JobRun.objects.for_tenant(acme).count() == 4 and len(sent) == 4  # the first two of each call


@pytest.fixture
def broker_down():
    """A broker nobody listens on: every send fails."""
    old = use_broker(eager=False, queue=None)
    celery_app.conf.broker_url = "redis://127.0.0.1:1/0"
    yield
    restore_broker(old)


def test_a_run_that_cannot_be_sent_stays_queued_and_the_request_still_answers(kick, acme, broker_down):
    response = kick("writer", {"route": "POST /jobs/write"})
    assert response.status_code == 202
    run = JobRun.objects.for_tenant(acme).get(run_id=as_json(response)["run_id"])
    assert run.status == "queued"  # the reaper sends it again once the broker is back


def test_a_run_queued_with_a_read_only_token_stays_read_only(client, kick, acme, make_token):
    _, raw = make_token(acme, "writer", read_only=True)
    response = client.get(
        "/t/acme/apps/chores/kick", {"route": "POST /jobs/write"}, HTTP_AUTHORIZATION=f"Bearer {raw}"
    )
    settle_in_process_runs()
    run = JobRun.objects.for_tenant(acme).get(run_id=as_json(response)["run_id"])
    assert run.caller["read_only"] is True
    assert run.status == "failed" and run.result_status == 403  # ran in-process: writes refused


def test_in_process_runs_start_after_the_handler_that_queued_them(client, acme, deploy, make_token):
    manifest = jobs_manifest()
    manifest["routes"]["POST /kick"]["timeoutMs"] = 500  # less than the slow job takes
    deploy(acme, manifest, JOB_HANDLERS)
    _, raw = make_token(acme, "writer")
    body = {"route": "POST /jobs/slow", "payload": {"seconds": 1}}
    response = client.post(
        "/t/acme/apps/chores/kick", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}"
    )
    assert response.status_code == 202
    settle_in_process_runs()
    run = JobRun.objects.for_tenant(acme).get(run_id=as_json(response)["run_id"])
    assert run.status == "succeeded" and run.duration_ms >= 1000


# --- the run state machine ---------------------------------------------------------------------


@pytest.fixture
def chores(acme, deploy):
    deploy(acme, jobs_manifest(), JOB_HANDLERS)
    return acme


def test_backoff_doubles_up_to_the_cap(settings):
    settings.JOBS_RETRY_BACKOFF_SECONDS, settings.JOBS_RETRY_BACKOFF_MAX_SECONDS = 10, 600
    assert [runs.backoff_seconds(n) for n in (1, 2, 3, 7, 8)] == [10, 20, 40, 600, 600]


def test_a_retry_waits_for_its_backoff(chores, sent):
    run = queue_run(chores, "writer", "POST /jobs/unavailable")
    execute.execute_run(run.run_id)
    run.refresh_from_db()
    assert run.status == "queued" and run.attempts == 1 and run.error_id.startswith("err_")
    assert sent == [(run.run_id, 0.2)] and run.due_at > run.started_at


def test_a_duplicate_delivery_does_not_run_an_attempt_twice(chores, sent):
    run = queue_run(chores, "writer", "POST /jobs/write")
    assert runs.claim(run, version_number=1, timeout_ms=1000)
    stale = JobRun.objects.for_tenant(chores).get(pk=run.pk)
    stale.status, stale.attempts = "queued", 0  # what a second delivery read before the claim
    assert not runs.claim(stale, version_number=1, timeout_ms=1000)
    execute.execute_run(run.run_id)  # a delivery of a run already running: nothing happens
    run.refresh_from_db()
    assert run.status == "running" and run.attempts == 1


def test_a_run_whose_route_is_gone_fails_with_an_error_id(chores, deploy, sent):
    run = queue_run(chores, "writer", "POST /jobs/write")
    manifest = jobs_manifest()
    del manifest["routes"]["POST /jobs/write"]
    deploy(chores, manifest, JOB_HANDLERS)
    execute.execute_run(run.run_id)
    run.refresh_from_db()
    assert run.status == "failed" and run.attempts == 0 and run.error_code == "route_unavailable"
    assert (
        "has no internal route 'POST /jobs/write'"
        in HandlerError.objects.for_tenant(chores).get(error_id=run.error_id).trace
    )


def test_a_run_of_an_undeployed_app_fails(chores, sent):
    run = queue_run(chores, "writer", "POST /jobs/write")
    undeploy_app(chores, "chores", acting_user=None)
    execute.execute_run(run.run_id)
    run.refresh_from_db()
    assert run.status == "failed" and run.error_code == "route_unavailable"


def test_the_reaper_fails_a_lost_run_with_no_attempts_left(chores, sent, settings):
    settings.JOBS_MAX_ATTEMPTS = 1
    run = queue_run(chores, "writer", "POST /jobs/write")
    assert runs.claim(run, version_number=1, timeout_ms=1000)
    assert runs.reap(run.deadline - timedelta(seconds=1)).failed == []  # not yet past its deadline

    reaped = runs.reap(run.deadline + timedelta(seconds=1))
    run.refresh_from_db()
    assert reaped.failed == [run.run_id] and run.status == "failed" and run.error_code == "worker_lost"
    assert HandlerError.objects.for_tenant(chores).get(error_id=run.error_id).kind == "worker_lost"
    assert run.finished_at is not None and sent == []


def test_a_run_lost_on_every_attempt_is_reaped_only_until_its_attempts_run_out(chores, sent, settings):
    run = queue_run(chores, "writer", "POST /jobs/write")
    outcomes = []
    for _ in range(settings.JOBS_MAX_ATTEMPTS):
        run.refresh_from_db()
        assert runs.claim(run, version_number=1, timeout_ms=1000)  # a worker starts it, then dies
        reaped = runs.reap(run.deadline + timedelta(seconds=1))
        outcomes.append("requeued" if reaped.requeued else "failed" if reaped.failed else "none")
    assert outcomes == ["requeued"] * (settings.JOBS_MAX_ATTEMPTS - 1) + ["failed"]
    run.refresh_from_db()
    assert run.status == "failed" and run.attempts == settings.JOBS_MAX_ATTEMPTS
    assert [entry["error_code"] for entry in run.attempt_log] == ["worker_lost"] * settings.JOBS_MAX_ATTEMPTS
    later = runs.reap(run.finished_at + timedelta(days=1))
    assert (later.requeued, later.failed, later.resent) == ([], [], [])


def test_an_attempt_the_reaper_took_back_cannot_finish_the_run(chores, sent):
    run = queue_run(chores, "writer", "POST /jobs/write")
    assert runs.claim(run, version_number=1, timeout_ms=1000)
    assert runs.reap(run.deadline + timedelta(seconds=1)).requeued == [run.run_id]
    # The "dead" worker was only slow: its late result must not overwrite the queued retry.
    assert runs.finish(run, 1, runs.Outcome(result_status=200)) is None
    run.refresh_from_db()
    assert run.status == "queued" and run.attempts == 1 and sent == [(run.run_id, None)]


def test_the_reaper_resends_runs_queued_for_too_long(chores, sent):
    run = queue_run(chores, "writer", "POST /jobs/write")
    resend = timedelta(seconds=settings.JOBS_QUEUED_RESEND_SECONDS)
    assert runs.reap(run.due_at + resend - timedelta(seconds=1)).resent == []
    assert runs.reap(run.due_at + resend + timedelta(seconds=1)).resent == [run.run_id]
    assert sent == [(run.run_id, None)]


# --- visible to tenant admins ------------------------------------------------------------------


@pytest.fixture
def two_runs(chores, sent):
    done = queue_run(chores, "writer", "POST /jobs/write", {"text": "x"})
    execute.execute_run(done.run_id)
    waiting = queue_run(chores, "reader", "POST /jobs/unavailable")
    return done, waiting


def test_admins_list_the_tenants_runs_newest_first(api_client, chores, two_runs, make_token):
    done, waiting = two_runs
    _, raw = make_token(chores, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    response = api_client.get("/api/tenants/acme/runs")
    assert response.status_code == 200
    assert [r["run_id"] for r in response.json()] == [waiting.run_id, done.run_id]
    first = response.json()[1]
    assert first["app"] == "chores" and first["version"] == 1 and first["job"] is None
    assert first["route"] == "POST /jobs/write" and first["status"] == "succeeded"
    assert first["caller"] == {
        "username": "writer",
        "roles": ["case_writer"],
        "superuser": False,
        "service": False,
    }
    assert first["duration_ms"] is not None and first["result_status"] == 200 and first["error_id"] is None

    filtered = api_client.get("/api/tenants/acme/runs", {"status": "queued", "app": "chores"}).json()
    assert [r["run_id"] for r in filtered] == [waiting.run_id]
    assert api_client.get("/api/tenants/acme/runs", {"status": "nope"}).status_code == 400
    assert api_client.get("/api/tenants/acme/runs", {"limit": "0"}).status_code == 400

    detail = api_client.get(f"/api/tenants/acme/runs/{done.run_id}").json()
    # An ended run no longer keeps its body (issue 35: bodies of ended runs filled the database).
    assert detail["body"] == {} and detail["attempt_log"][0]["result_status"] == 200
    assert JobRun.objects.for_tenant(chores).get(run_id=done.run_id).body_bytes == 0


def test_members_and_other_tenants_cannot_see_runs(
    api_client, chores, two_runs, make_token, make_tenant, make_member
):
    done, _ = two_runs
    _, raw = make_token(chores, "writer")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api_client.get("/api/tenants/acme/runs").status_code == 403

    other = make_tenant("other")
    make_member(other, "boss", admin=True)
    _, raw = make_token(other, "boss")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api_client.get(f"/api/tenants/other/runs/{done.run_id}").status_code == 404
    assert api_client.get("/api/tenants/other/runs").json() == []


def test_the_admin_lists_runs_read_only(client, two_runs):
    client.force_login(access_user("root"))
    response = client.get("/admin/apps_runtime/jobrun/")
    assert response.status_code == 200 and two_runs[0].run_id in response.content.decode()
    assert client.get("/admin/apps_runtime/jobrun/add/").status_code == 403
    assert client.get("/admin/apps_runtime/job/").status_code == 200


# --- the embedded default's clock --------------------------------------------------------------


def test_a_clock_tick_fires_the_due_jobs_in_process(acme, deploy):
    deploy(acme, jobs_manifest({"often": {**WRITE_JOB, "schedule": "* * * * *"}}), JOB_HANDLERS)
    [run_id] = clock.tick(Job.objects.for_tenant(acme).get().active_since)
    settle_in_process_runs()
    run = JobRun.objects.for_tenant(acme).get(run_id=run_id)
    assert run.status == "succeeded" and run.caller["username"] == "job:chores/often"


def test_the_clock_thread_keeps_ticking_after_a_failed_tick(monkeypatch):
    ticks: list[int] = []

    def tick():
        ticks.append(1)
        if len(ticks) == 1:
            raise RuntimeError("the database went away")

    monkeypatch.setattr(clock, "tick", tick)
    monkeypatch.setattr(clock, "close_old_connections", lambda: None)
    ticking = clock.InProcessClock(every=0.01)
    ticking.start()
    try:
        wait_until(lambda: len(ticks) >= 3, "three ticks")
    finally:
        ticking.stop()


def test_the_in_process_clock_runs_its_other_upkeep_even_when_the_tick_fails(monkeypatch):
    def tick():
        raise RuntimeError("the database went away")

    swept = []
    monkeypatch.setattr(clock, "tick", tick)
    monkeypatch.setattr(clock, "close_old_connections", lambda: None)
    ticking = clock.InProcessClock(every=0.01, also=[lambda: swept.append(1)])
    ticking.start()
    try:
        wait_until(lambda: len(swept) >= 2, "two sweeps")
    finally:
        ticking.stop()


def test_a_run_queued_by_a_member_who_left_runs_nothing(chores, sent):
    run = queue_run(chores, "writer", "POST /jobs/write", {"text": "late"})
    Membership.objects.for_tenant(chores).filter(user__username="writer").delete()
    execute.execute_run(run.run_id)
    run.refresh_from_db()
    assert (run.status, run.error_code) == ("failed", "caller_gone") and run.error_id.startswith("err_")
    assert "no longer a member" in HandlerError.objects.for_tenant(chores).get(error_id=run.error_id).trace


def test_a_successful_attempt_keeps_its_print_output_and_the_console_shows_it(acme, deploy, client):
    printing = "def handle(request):\n    print('wrote 3 notes')\n    return {'ok': True}\n"
    manifest = jobs_manifest({"often": {**WRITE_JOB, "schedule": "* * * * *"}})
    deploy(acme, manifest, {**JOB_HANDLERS, "server/write.py": printing})
    [run_id] = clock.tick(Job.objects.for_tenant(acme).get().active_since)
    settle_in_process_runs()
    run = JobRun.objects.for_tenant(acme).get(run_id=run_id)
    assert run.status == "succeeded" and "wrote 3 notes" in run.attempt_log[0]["output"]
    client.force_login(access_user("admin"))
    page = client.get(f"/console/acme/runs/{run_id}").content.decode()
    assert '<pre class="output">wrote 3 notes' in page
    assert "+00:00" not in page and "Times in UTC." in page  # one zone, said once
