"""test_input_required_result_multi_round: Asks two questions, one round each."""

from platform_sdk import elicit

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}


def handle(request):
    first = request.ask({"step1": elicit("Step 1: What is your name?", NAME)})["step1"]
    second = request.ask({"step2": elicit("Step 2: What is your favorite color?", COLOR)})["step2"]
    name = (first.get("content") or {}).get("name", "?")
    color = (second.get("content") or {}).get("color", "?")
    return {"content": [{"type": "text", "text": f"{name} likes {color}"}]}
