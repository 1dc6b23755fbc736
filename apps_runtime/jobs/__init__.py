"""App jobs: scheduled and background runs of internal routes, executed by Celery.

- ``schedule``: the per-minute dispatcher turns the active versions' cron schedules into runs.
- ``enqueue``: ``request.enqueue(route, body)`` from a handler queues a run as the same caller.
- ``runs``: the run's state machine (claim, finish, retry with backoff, reap lost attempts).
- ``execute``: one attempt of a run, through the same ``run_route`` as every other caller.
- ``principals``: a scheduled job's service principal (a run's caller is snapshotted on the run
  and re-derived with today's rights for each attempt: ``tenants.callers.caller_now``).
- ``queue``: sending ``run_job`` tasks once the rows they name are committed.
- ``clock``: with no broker (so no beat), a thread that ticks the dispatcher and the reaper.

The Celery tasks themselves are thin wrappers in ``apps_runtime/tasks.py``.
"""
