"""test_input_required_result_capabilities: Asks only through the capabilities the client declared."""

from platform_sdk import elicit, sample

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def handle(request):
    questions = {}
    if request.can_ask("sampling"):
        questions["greeting"] = sample("Generate a greeting", max_tokens=50)
    if request.can_ask("elicitation"):
        questions["user_name"] = elicit("What is your name?", NAME)
    answers = request.ask(questions) if questions else {}
    return {"content": [{"type": "text", "text": f"Asked {len(answers)} question(s)."}]}
