from typing import Any

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from oauth.checks import PUBLIC_ORIGIN_TAG

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
        # Said once, here, where it matters: other commands leave them to `check --deploy`.
        self.check(tags=[PUBLIC_ORIGIN_TAG], include_deployment_checks=True)
        uvicorn.run(
            "lowcode_platform.asgi:application",
            host=options["host"],
            port=options["port"],
            workers=workers,
            lifespan="on",
            log_level="info",
            access_log=not options["no_access_log"],
        )
