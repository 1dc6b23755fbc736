"""multi_input: asks two questions at once."""

from platform_sdk import elicit

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def handle(request):
    answers = request.ask({"first": elicit("First name?", NAME), "second": elicit("Second name?", NAME)})
    names = [(answers[key].get("content") or {}).get("name", "?") for key in ("first", "second")]
    return {"content": [{"type": "text", "text": " and ".join(names)}]}
