"""The dispatcher: every minute, the active versions' job schedules become queued runs.

Beat sends one static task each minute; this module reads the schedules from the database (``Job``
rows, replaced by every deploy, rollback and undeploy), so schedule changes need no beat restart.
Each tick looks at the current minute and the few before it (``JOBS_DISPATCH_LOOKBACK_MINUTES``), so a
tick that runs late (a busy worker, a beat restart) still fires the minutes it missed. Minutes before
a job's version became active never fire. The unique constraint on (app, job, minute) makes every
tick idempotent: two beats, or a tick delivered twice, insert each run once.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils import timezone

from apps_runtime.jobs.enqueue import new_run_id
from apps_runtime.jobs.principals import job_principal
from apps_runtime.jobs.queue import send_on_commit
from apps_runtime.manifest.cron import CronSchedule, parse_cron
from apps_runtime.models import Job, JobRun

_BATCH = 500


@functools.lru_cache(maxsize=4096)
def _cron(expr: str) -> CronSchedule:
    return parse_cron(expr)


def minute_of(moment: datetime) -> datetime:
    """The start of ``moment``'s minute, in UTC."""
    if timezone.is_naive(moment):
        raise ValueError(f"{moment!r} has no time zone")
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def due_minutes(job: Job, minutes: list[datetime]) -> list[datetime]:
    """The minutes (ascending) at which ``job`` is due: on its schedule, and not before its version served."""
    since = minute_of(job.active_since)
    schedule = _cron(job.schedule)
    return [minute for minute in minutes if minute >= since and schedule.matches(minute)]


def _taken(minutes: list[datetime]) -> set[tuple[int, str, datetime]]:
    """(app id, job, minute) of the runs already queued for these minutes."""
    return set(
        JobRun.all_tenants.filter(scheduled_for__gte=minutes[0], scheduled_for__lte=minutes[-1])
        .exclude(job="")
        .values_list("app_id", "job", "scheduled_for")
    )


def dispatch_due_jobs(now: datetime | None = None) -> list[str]:
    """Queue a run for every job minute due up to ``now`` (default: the current time), once each.

    Returns the ids of the runs this call inserted (the others were already there); their tasks are
    sent once committed.
    """
    current = minute_of(now or timezone.now())
    lookback = max(0, settings.JOBS_DISPATCH_LOOKBACK_MINUTES)
    minutes = [current - timedelta(minutes=back) for back in range(lookback, -1, -1)]
    # Platform-wide on purpose: one dispatcher serves every tenant.
    jobs = list(
        Job.all_tenants.filter(active_since__lt=current + timedelta(minutes=1))
        .select_related("app", "version")
        .only(
            "tenant",
            "app__name",
            "version__number",
            "name",
            "route_key",
            "schedule",
            "run_as",
            "active_since",
        )
    )
    taken = _taken(minutes)
    planned = [
        JobRun(
            run_id=new_run_id(),
            tenant_id=job.tenant_id,
            app_id=job.app_id,
            version_number=job.version.number,
            job=job.name,
            route_key=job.route_key,
            caller=principal.to_snapshot(),
            member=principal.person_key,
            body={},
            scheduled_for=minute,
            enqueued_at=timezone.now(),
            due_at=timezone.now(),
        )
        for job in jobs
        for principal in [job_principal(job.tenant_id, job.app.name, job.name, job.run_as)]
        for minute in due_minutes(job, minutes)
        if (job.app_id, job.name, minute) not in taken
    ]
    if not planned:
        return []
    # Another dispatcher may insert the same minutes meanwhile: the constraint keeps theirs and drops
    # ours, and only the rows this call inserted carry one of its run ids.
    JobRun.all_tenants.bulk_create(planned, batch_size=_BATCH, ignore_conflicts=True)
    wanted = [run.run_id for run in planned]
    inserted = set()
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        inserted.update(JobRun.all_tenants.filter(run_id__in=batch).values_list("run_id", flat=True))
    run_ids = [run_id for run_id in wanted if run_id in inserted]
    send_on_commit(run_ids)
    return run_ids
