"""test_elicitation_sep1034_defaults: Tests elicitation with default values per SEP-1034."""

import json

from platform_sdk import elicit

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}


def handle(request):
    question = elicit("Please review and update the form fields with defaults", SCHEMA)
    answer = request.ask({"form": question})["form"]
    shown = json.dumps(answer.get("content") or {})
    return {
        "content": [
            {"type": "text", "text": f"Elicitation completed: action={answer['action']}, content={shown}"}
        ]
    }
