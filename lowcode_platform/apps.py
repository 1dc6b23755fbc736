from contextvars import Token

from celery.signals import task_postrun, task_prerun
from django.apps import AppConfig

from core.logs import trace_id

# The trace id each running task replaced, to put back when it ends: a task run eagerly (no broker)
# runs in its caller's context, whose lines must not keep the task's id afterwards.
_replaced: dict[str, Token] = {}


class PlatformConfig(AppConfig):
    name = "lowcode_platform"
    verbose_name = "Platform"

    def ready(self) -> None:
        task_prerun.connect(_trace_by_task, weak=False)
        task_postrun.connect(_end_task_trace, weak=False)


def _trace_by_task(task_id: str, **kwargs) -> None:
    """A Celery worker's log lines carry the id of the task they belong to as their trace id."""
    _replaced[task_id] = trace_id.set(task_id)


def _end_task_trace(task_id: str, **kwargs) -> None:
    token = _replaced.pop(task_id, None)
    if token is None:
        return
    try:
        trace_id.reset(token)
    except ValueError:  # ended in another context than it started in: nothing of its caller to restore
        trace_id.set(None)
