"""A test app of task tools: a slow report (task required), a quick one (optional), a plain one, and
one answering with a link to the app's own route."""

from __future__ import annotations

import copy

TASK_FILES = {
    "server/slow.py": """
import time

def handle(request):
    if request.body["label"] == "fail":
        return {"error": "asked to fail"}, 422
    time.sleep(request.body["seconds"])
    return {"label": request.body["label"], "slept": request.body["seconds"]}
""",
    "server/staged.py": """
import time

def handle(request):
    request.progress(1, 2, "halfway")
    time.sleep(request.body["seconds"])
    return {"staged": True}
""",
    "server/quick.py": """
def handle(request):
    return {"quick": True}
""",
    "server/linked.py": """
from platform_sdk import resource_link

def handle(request):
    return {"content": [resource_link("/quick", "Quick")]}
""",
}


def _tool(name: str, route: str, properties: dict | None = None, **extra) -> dict:
    return {
        "name": name,
        "description": f"Test tool {name}, which calls {route}.",
        "route": route,
        "inputSchema": {
            "type": "object",
            "properties": properties or {},
            "required": list(properties or {}),
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False},
        **extra,
    }


MANIFEST = {
    "name": "reports",
    "access": "user",
    "routes": {
        "POST /reports": {
            "handler": "server/slow.py",
            "auth": "role:case_reader,case_writer",
            "timeoutMs": 60_000,
        },
        "GET /quick": {"handler": "server/quick.py", "auth": "user"},
        "POST /staged": {"handler": "server/staged.py", "auth": "user"},
        "GET /plain": {"handler": "server/quick.py", "auth": "user"},
        "GET /linked": {"handler": "server/linked.py", "auth": "user"},
    },
    "mcp": {
        "tools": [
            _tool(
                "slow_report",
                "POST /reports",
                {"seconds": {"type": "number", "minimum": 0, "maximum": 60}, "label": {"type": "string"}},
                task="required",
            ),
            _tool("quick", "GET /quick", task="optional"),
            _tool("staged", "POST /staged", {"seconds": {"type": "number", "maximum": 10}}, task="optional"),
            _tool("plain", "GET /plain"),
            _tool("linked", "GET /linked", task="required"),
        ]
    },
}


def task_manifest() -> dict:
    return copy.deepcopy(MANIFEST)
