"""test_input_required_result_multiple_inputs: see its app.json."""

from platform_sdk import elicit, list_roots, sample

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def handle(request):
    answers = request.ask(
        {
            "user_name": elicit("What is your name?", NAME),
            "greeting": sample("Generate a greeting", max_tokens=50),
            "client_roots": list_roots(),
        }
    )
    name = (answers["user_name"].get("content") or {}).get("name", "stranger")
    greeting = (answers["greeting"].get("content") or {}).get("text", "")
    roots = len(answers["client_roots"].get("roots") or [])
    return {"content": [{"type": "text", "text": f"{greeting} {name} ({roots} roots)"}]}
