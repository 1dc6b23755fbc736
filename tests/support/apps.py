"""A test app that exercises every runtime and gateway behaviour through real handlers."""

from __future__ import annotations

import copy

READ = "role:case_reader,case_writer"
WRITE = "role:case_writer"

CASES_SCHEMA = {
    "type": "object",
    "properties": {
        "client_name": {"type": "string", "minLength": 1},
        "reference": {"type": "string"},
        "status": {"type": "string", "enum": ["open", "closed"]},
        "escalated": {"type": "boolean"},
    },
    "required": ["client_name"],
}

HANDLERS = {
    "server/search.py": """
def handle(request):
    q = request.query.get("query", "").lower()
    page = request.records.query("cases", limit=200)
    return [r["data"] for r in page["items"] if q in r["data"]["client_name"].lower()]
""",
    "server/get.py": """
from platform_sdk import NotFound

def handle(request):
    try:
        return request.records.get("cases", request.params["case_id"])["data"]
    except NotFound:
        return {"error": "case not found"}, 404
""",
    "server/create.py": """
def handle(request):
    return request.records.create("cases", request.body.get("data", request.body)), 201
""",
    "server/escalate.py": """
def handle(request):
    record = request.records.update("cases", request.params["case_id"], {"escalated": True})
    return {"id": record["id"], "escalated": record["data"]["escalated"]}
""",
    "server/echo.py": """
def handle(request):
    return {"method": request.method, "path": request.path, "body": request.body, "query": request.query,
            "params": request.params, "tool": request.tool, "user": request.user}
""",
    "server/status.py": """
def handle(request):
    code = int(request.params["code"])
    return {"error": f"status {code} on purpose"}, code
""",
    "server/boom.py": """
def handle(request):
    secret = "/srv/host/path"
    raise RuntimeError("database password is hunter2 at " + secret)
""",
    "server/loop.py": """
def handle(request):
    while True:
        pass
""",
    "server/listing.py": """
def handle(request):
    return [1, 2, 3]
""",
    "server/bad_output.py": """
def handle(request):
    return {"count": "not a number"}
""",
    "server/job.py": """
def handle(request):
    return {"ran": True}
""",
    "server/ping.py": """
def handle(request):
    return {"pong": True, "user": request.user}
""",
}


def _tool(name, route, props=None, required=(), read_only=True, **extra):
    return {
        "name": name,
        "title": name.replace("_", " ").title(),
        "description": f"Test tool {name} that calls {route}.",
        "route": route,
        "inputSchema": {
            "type": "object",
            "properties": props or {},
            "required": list(required),
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": read_only, "destructiveHint": False},
        **extra,
    }


MANIFEST = {
    "name": "cases",
    "title": "Cases",
    "description": "A test app.",
    "access": "user",
    "collections": {"cases": {"schema": CASES_SCHEMA, "read": READ, "write": WRITE}},
    "routes": {
        "GET /cases/search": {"handler": "server/search.py", "auth": READ},
        "GET /cases/{case_id}": {"handler": "server/get.py", "auth": READ},
        "POST /cases": {"handler": "server/create.py", "auth": WRITE},
        "POST /cases/{case_id}/escalate": {"handler": "server/escalate.py", "auth": WRITE},
        "POST /echo/{thing}": {"handler": "server/echo.py", "auth": "user"},
        "GET /echo/{thing}": {"handler": "server/echo.py", "auth": "user"},
        "GET /status/{code}": {"handler": "server/status.py", "auth": "user"},
        "GET /boom": {"handler": "server/boom.py", "auth": "user"},
        "GET /loop": {"handler": "server/loop.py", "auth": "user", "timeoutMs": 300},
        "GET /listing": {"handler": "server/listing.py", "auth": "user"},
        "GET /bad-output": {"handler": "server/bad_output.py", "auth": "user"},
        "GET /ping": {"handler": "server/ping.py", "auth": "public"},
        "POST /jobs/reindex": {"handler": "server/job.py", "auth": "internal"},
    },
    "mcp": {
        "tools": [
            _tool("find_case", "GET /cases/search", {"query": {"type": "string", "minLength": 2}}, ["query"]),
            _tool("get_case", "GET /cases/{case_id}", {"case_id": {"type": "string"}}, ["case_id"]),
            _tool(
                "create_case",
                "POST /cases",
                {"client_name": {"type": "string"}, "status": {"type": "string"}},
                ["client_name"],
                read_only=False,
            ),
            _tool(
                "echo",
                "POST /echo/{thing}",
                {"thing": {"type": "string"}, "count": {"type": "integer"}, "tags": {"type": "array"}},
                ["thing"],
                read_only=False,
            ),
            _tool("fail_status", "GET /status/{code}", {"code": {"type": "string"}}, ["code"]),
            _tool("boom", "GET /boom"),
            _tool("listing", "GET /listing"),
            _tool(
                "bad_output",
                "GET /bad-output",
                outputSchema={"type": "object", "properties": {"count": {"type": "integer"}}},
            ),
        ]
    },
}


def cases_manifest(**changes) -> dict:
    manifest = copy.deepcopy(MANIFEST)
    manifest.update(changes)
    return manifest


def cases_manifest_plus(routes: dict, tools: list) -> dict:
    """The test app with more routes and tools."""
    return cases_manifest(
        routes={**MANIFEST["routes"], **routes}, mcp={"tools": [*MANIFEST["mcp"]["tools"], *tools]}
    )
