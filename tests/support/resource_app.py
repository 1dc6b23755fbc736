"""The test app (``tests.support.apps``) with resources and prompts of every kind."""

from __future__ import annotations

from tests.support.apps import HANDLERS, WRITE, _tool, cases_manifest

PNG = b"\x89PNG\r\n\x1a\n" + bytes(40)
HANDBOOK = "# Handbook\n\nAnswer within two days. Be kind.\n"

FILES = {
    **HANDLERS,
    "docs/handbook.md": HANDBOOK,
    "docs/logo.png": PNG,
    "docs/writers.txt": "For case writers only.\n",
    "server/summary.py": """
def handle(request):
    page = request.records.query("cases", limit=200)
    return {"cases": len(page["items"]), "user": request.user["username"] if request.user else None}
""",
    "server/rename.py": """
def handle(request):
    record = request.records.update("cases", request.params["case_id"], {"client_name": request.body["name"]})
    return {"id": record["id"]}
""",
    "server/attach.py": """
from platform_sdk import embedded_resource, text

def handle(request):
    note = embedded_resource("cases://notes/today", "Call Ada.", "text/plain")
    return {"content": [text("The note:"), note]}
""",
    "server/complete_case.py": """
def handle(request):
    prefix = request.query.get("value", "")
    page = request.records.query("cases", limit=200)
    return [r["id"] for r in page["items"] if r["id"].startswith(prefix)]
""",
    "server/prompt.py": """
from platform_sdk import NotFound

def handle(request):
    case_id = request.query.get("case_id", "")
    try:
        case = request.records.get("cases", case_id)["data"]
    except NotFound:
        return {"error": "no such case"}, 404
    return {"description": "Reply to " + case["client_name"], "messages": [
        {"role": "user", "content": {"type": "text", "text": "Write to " + case["client_name"] + "."}},
    ]}
""",
}

RESOURCES = [
    {
        "name": "handbook",
        "title": "Handbook",
        "description": "How we answer clients.",
        "file": "docs/handbook.md",
    },
    {"name": "logo", "description": "The firm's logo.", "file": "docs/logo.png"},
    {
        "name": "writers_note",
        "description": "A note for writers.",
        "file": "docs/writers.txt",
        "auth": WRITE,
    },
    {
        "name": "summary",
        "description": "How many cases the caller can read.",
        "route": "GET /summary",
    },
    {
        "name": "case",
        "title": "Case",
        "description": "One case, as its route answers it.",
        "route": "GET /cases/{case_id}",
        "uri": "cases/{case_id}",
        "variables": {"case_id": {"description": "The case id", "complete": "GET /complete/case"}},
    },
    {"name": "case_record", "description": "One case record, with its metadata.", "collection": "cases"},
]

PROMPTS = [
    {"name": "greeting", "description": "Say hello to the team."},
    {
        "name": "draft_reply",
        "title": "Draft a reply",
        "description": "Draft a reply to a client about a case.",
        "arguments": [
            {
                "name": "case_id",
                "description": "The case",
                "required": True,
                "complete": "GET /complete/case",
            },
            {"name": "tone", "description": "How to sound", "enum": ["formal", "friendly"]},
        ],
        "messages": [
            {"role": "user", "text": "Draft a {tone} reply about case {case_id}. Use {{braces}} literally."},
            {"role": "user", "resource": "handbook"},
            {"role": "user", "image": "docs/logo.png"},
        ],
    },
    {
        "name": "reply_from_route",
        "description": "A reply prompt the app builds from the case.",
        "arguments": [{"name": "case_id", "required": True}],
        "route": "GET /prompts/reply",
    },
    {
        "name": "writers_only",
        "description": "For writers.",
        "auth": WRITE,
        "messages": [{"role": "assistant", "text": "Noted."}],
    },
]
PROMPTS[0]["messages"] = [{"role": "user", "text": "Hello, team!"}]


def resource_manifest() -> dict:
    manifest = cases_manifest()
    manifest["routes"].update(
        {
            "GET /summary": {"handler": "server/summary.py", "auth": "user"},
            "GET /complete/case": {"handler": "server/complete_case.py", "auth": "user"},
            "GET /prompts/reply": {"handler": "server/prompt.py", "auth": "user"},
            "POST /cases/{case_id}/rename": {"handler": "server/rename.py", "auth": WRITE},
            "GET /attach": {"handler": "server/attach.py", "auth": "user"},
        }
    )
    manifest["mcp"]["tools"].append(_tool("attach", "GET /attach"))
    manifest["mcp"]["tools"].append(
        _tool(
            "rename_case",
            "POST /cases/{case_id}/rename",
            {"case_id": {"type": "string"}, "name": {"type": "string"}},
            ["case_id", "name"],
            read_only=False,
        )
    )
    manifest["mcp"]["resources"] = RESOURCES
    manifest["mcp"]["prompts"] = PROMPTS
    return manifest
