from contextvars import Token
from pathlib import Path

from celery.signals import task_postrun, task_prerun
from django.apps import AppConfig
from django.conf import settings

from core.logs import trace_id
from lowcode_platform.tracing import configure_tracing

# The trace id each running task replaced, to put back when it ends: a task run eagerly (no broker)
# runs in its caller's context, whose lines must not keep the task's id afterwards.
_replaced: dict[str, Token] = {}


class PlatformConfig(AppConfig):
    name = "lowcode_platform"
    verbose_name = "Platform"

    def ready(self) -> None:
        from lowcode_platform import checks  # noqa: F401  (registers the system checks of its settings)

        make_data_folders()
        task_prerun.connect(_trace_by_task, weak=False)
        task_postrun.connect(_end_task_trace, weak=False)
        configure_tracing()


def make_data_folders() -> None:
    """The var dir (owner-only) and the folders the settings place in it, made before any use.

    Here rather than in the settings, whose import must not touch files: every process that serves
    or runs commands starts the app registry first, before opening the SQLite database there.
    WhiteNoise scans STATIC_ROOT when the first request comes, and tier 1 mounts SANDBOX_BUNDLE_DIR
    into the sandbox before any bundle is unpacked.
    """
    # var/ holds the SQLite database and the dev secret: owner-only, so handlers dropped to another
    # uid cannot read them even at the weakest isolation tier.
    settings.VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    settings.VAR_DIR.chmod(0o700)
    Path(settings.STATIC_ROOT).mkdir(exist_ok=True)
    Path(settings.SANDBOX_BUNDLE_DIR).mkdir(exist_ok=True)


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
