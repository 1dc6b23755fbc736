import logging
import os
from pathlib import Path
from typing import Any

import uvicorn
from django.conf import settings
from django.core.checks import run_checks
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps_runtime.checks import SCREENS_ORIGIN_TAG
from oauth.checks import PUBLIC_ORIGIN_TAG

logger = logging.getLogger("lowcode_platform.serve")

STATEFUL_WORKERS = (
    "--workers {workers} needs MCP_STATELESS=true: MCP sessions live in the memory of the worker that "
    "opened them, and the workers share one port, so a session's next request may reach another "
    "worker. For stateful sessions run one worker per port behind a proxy with sticky sessions."
)


class Command(BaseCommand):
    help = "Serve the platform (MCP + Django) under uvicorn."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--workers",
            type=int,
            default=1,
            help="uvicorn worker processes (more than one: MCP_STATELESS)",
        )
        parser.add_argument("--no-access-log", action="store_true", help="do not log a line per HTTP request")

    def handle(self, *args: Any, **options: Any) -> None:
        workers = options["workers"]
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        if workers > 1 and not settings.MCP_STATELESS:
            raise CommandError(STATEFUL_WORKERS.format(workers=workers))
        if workers > 1:
            _share_metrics_between_workers()
        # Said once, here, where it matters (other commands leave them to `check --deploy`), as a
        # log line each, so JSON logs stay JSON.
        for message in run_checks(tags=[PUBLIC_ORIGIN_TAG], include_deployment_checks=True):
            logger.warning("%s", message)
        # A SCREENS_ORIGIN on the platform's own site would put tenant scripts where its cookies go.
        refused = run_checks(tags=[SCREENS_ORIGIN_TAG])
        if refused:
            raise CommandError("; ".join(str(message) for message in refused))
        uvicorn.run(
            "lowcode_platform.asgi:application",
            host=options["host"],
            port=options["port"],
            workers=workers,
            lifespan="on",
            log_level="info",
            access_log=not options["no_access_log"],
            # JSON logs: uvicorn's lines go through the settings' LOGGING (its default config is plain text).
            **({"log_config": None} if settings.LOG_FORMAT == "json" else {}),
        )


def _share_metrics_between_workers() -> None:
    """Point the workers' prometheus-client at one folder, emptied first (stale counts would add up).

    The workers are new interpreters that read the variable when they import prometheus-client.
    """
    folder = Path(settings.PROMETHEUS_MULTIPROC_DIR or settings.VAR_DIR / "metrics")
    folder.mkdir(mode=0o700, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
