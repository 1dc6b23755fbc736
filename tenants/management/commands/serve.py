from typing import Any

import uvicorn
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Serve the platform (MCP + Django) under uvicorn."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")

    def handle(self, *args: Any, **options: Any) -> None:
        uvicorn.run(
            "lowcode_platform.asgi:application",
            host=options["host"],
            port=options["port"],
            workers=options["workers"],
            lifespan="on",
            log_level="info",
        )
