from celery.signals import task_prerun
from django.apps import AppConfig

from core.logs import trace_id


class PlatformConfig(AppConfig):
    name = "lowcode_platform"
    verbose_name = "Platform"

    def ready(self) -> None:
        task_prerun.connect(_trace_by_task, weak=False)


def _trace_by_task(task_id: str, **kwargs) -> None:
    """A Celery worker's log lines carry the id of the task they belong to as their trace id."""
    trace_id.set(task_id)
