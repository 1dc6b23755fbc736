"""Small apps for the tool-search tests: near-duplicate tools across apps, some behind roles."""

from __future__ import annotations

ECHO = {
    "server/echo.py": """
def handle(request):
    return {"tool": request.tool["name"] if request.tool else None, "arguments": request.body}
"""
}


def _tool(name: str, title: str, description: str, *, read_only: bool, **extra) -> dict:
    return {
        "name": name,
        "title": title,
        "description": description,
        "route": f"POST /{name}",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Free text."}},
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": read_only, "destructiveHint": False},
        **extra,
    }


def app_manifest(name: str, title: str, access: str, tools: list[dict]) -> dict:
    return {
        "name": name,
        "title": title,
        "description": f"The {title} app.",
        "access": access,
        "routes": {f"POST /{t['name']}": {"handler": "server/echo.py", "auth": access} for t in tools},
        "mcp": {"tools": tools},
    }


BILLING = app_manifest(
    "billing",
    "Billing",
    "role:finance",
    [
        _tool(
            "create_invoice",
            "Create invoice",
            "Issue an invoice to a customer for delivered work, with line items and a due date.",
            read_only=False,
            keywords=["bill a client", "charge for work"],
        ),
        _tool(
            "refund_payment",
            "Refund payment",
            "Return a received payment to the customer, fully or in part.",
            read_only=False,
            keywords=["give money back", "reimburse"],
        ),
        _tool(
            "list_invoices",
            "List invoices",
            "Show the invoices of a customer, with their status and amounts.",
            read_only=True,
        ),
    ],
)

SALES = app_manifest(
    "sales",
    "Sales",
    "user",
    [
        _tool(
            "create_quote",
            "Create quote",
            "Prepare a price quote (an offer) for a prospect before any work is agreed.",
            read_only=False,
        ),
    ],
)

PEOPLE = app_manifest(
    "people",
    "People",
    "user",
    [
        _tool(
            "request_leave",
            "Request leave",
            "Ask your manager for days of leave.",
            read_only=False,
            keywords=["vacation", "time off", "holiday"],
            pinned=True,
        ),
        _tool(
            "find_colleague",
            "Find colleague",
            "Look up a colleague's phone number, office and team.",
            read_only=True,
            keywords=["directory", "who is"],
        ),
    ],
)

BOARD = app_manifest(
    "board",
    "Board",
    "role:executive",
    [
        _tool(
            "approve_budget",
            "Approve budget",
            "Approve the yearly budget of a department.",
            read_only=False,
        ),
    ],
)

APPS = (BILLING, SALES, PEOPLE, BOARD)
