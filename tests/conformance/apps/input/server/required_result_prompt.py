"""test_input_required_result_prompt: see its app.json."""

from platform_sdk import elicit

CONTEXT = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}


def handle(request):
    answer = request.ask({"user_context": elicit("What context should the prompt use?", CONTEXT)})
    context = (answer["user_context"].get("content") or {}).get("context", "")
    return {
        "messages": [{"role": "user", "content": {"type": "text", "text": f"Use this context: {context}"}}]
    }
