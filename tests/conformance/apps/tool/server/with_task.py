"""test_tool_with_task: a task-only tool that asks the user's name, then greets them."""

from platform_sdk import elicit

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def handle(request):
    answer = request.ask({"user_name": elicit("What is your name?", NAME)})["user_name"]
    name = (answer.get("content") or {}).get("name", "stranger")
    return {"content": [{"type": "text", "text": f"Hello, {name}!"}]}
