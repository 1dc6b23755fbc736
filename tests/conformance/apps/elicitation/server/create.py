"""test_elicitation_create: see its app.json."""

import json

from platform_sdk import elicit

SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


def handle(request):
    answer = request.ask({"response": elicit(request.body.get("message", ""), SCHEMA)})["response"]
    shown = json.dumps(answer.get("content") or {})
    return {
        "content": [{"type": "text", "text": f"User response: action={answer['action']}, content={shown}"}]
    }
