"""``core.background.Dispatcher``: work named by an id, sent once the transaction commits; with no
broker (the test settings) it runs on a fair pool of this process, never in the sending thread."""

from __future__ import annotations

import threading

import pytest

from core.background import Dispatcher

WAIT = 30

pytestmark = pytest.mark.django_db


@pytest.fixture
def ran():
    seen: list[tuple[str, str]] = []
    lock = threading.Lock()

    def run(one: str) -> None:
        if one == "boom":
            raise RuntimeError("the work failed")
        with lock:
            seen.append((one, threading.current_thread().name))

    return seen, run


def dispatcher(run, tenant_of=lambda one: "acme") -> Dispatcher:
    return Dispatcher(
        "test-work",
        task_name="tests.never_sent",
        tenant_of=tenant_of,
        run=run,
        workers_setting="TASK_IN_PROCESS_WORKERS",
        share_setting="TASK_TENANT_SHARE",
    )


def test_work_is_sent_once_the_transaction_commits_and_runs_on_a_pool_thread(
    ran, django_capture_on_commit_callbacks
):
    seen, run = ran
    work = dispatcher(run)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        work.send_on_commit(["a", "b"])
    assert seen == [] and len(callbacks) == 2  # nothing before the commit

    for callback in callbacks:
        callback()
    assert work.in_process_pool().wait_idle(WAIT)
    assert sorted(one for one, _ in seen) == ["a", "b"]
    assert all(thread.startswith("test-work-") for _, thread in seen)


def test_a_failure_is_logged_and_the_work_after_it_still_runs(
    ran, caplog, django_capture_on_commit_callbacks
):
    seen, run = ran
    work = dispatcher(run)
    with django_capture_on_commit_callbacks(execute=True):
        work.send_on_commit(["boom", "after"])
    assert work.in_process_pool().wait_idle(WAIT)
    assert [one for one, _ in seen] == ["after"]
    assert "test-work boom failed in-process" in caplog.text


def test_work_whose_row_is_gone_does_not_run(ran, django_capture_on_commit_callbacks):
    seen, run = ran
    asked: list[str] = []
    work = dispatcher(run, tenant_of=lambda one: asked.append(one))  # None: the row is gone
    with django_capture_on_commit_callbacks(execute=True):
        work.send_on_commit(["deleted"])
    assert work.in_process_pool().wait_idle(WAIT)
    assert asked == ["deleted"] and seen == []


def test_the_pool_is_built_from_the_settings_of_its_first_use(ran, settings):
    _, run = ran
    settings.TASK_IN_PROCESS_WORKERS, settings.TASK_TENANT_SHARE = 3, 2
    work = dispatcher(run)
    pool = work.in_process_pool()
    assert (pool.workers, pool.share, pool.name) == (3, 2, "test-work")
    settings.TASK_IN_PROCESS_WORKERS = 1
    assert work.in_process_pool() is pool
    work.forget_pool()
    assert work.in_process_pool().workers == 1
