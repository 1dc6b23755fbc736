"""test_streaming_elicitation: Asks the user one question (the answer comes on a retried call)."""

from platform_sdk import elicit

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def handle(request):
    answer = request.ask({"user_name": elicit("What is your name?", NAME)})["user_name"]
    return {"content": [{"type": "text", "text": str((answer.get("content") or {}).get("name"))}]}
