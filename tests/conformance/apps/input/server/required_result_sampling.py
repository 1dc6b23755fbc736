"""test_input_required_result_sampling: Asks the client's model a question (one sampling round)."""

from platform_sdk import sample


def handle(request):
    answer = request.ask({"capital_question": sample("What is the capital of France?", max_tokens=100)})
    reply = answer["capital_question"].get("content") or {}
    return {"content": [{"type": "text", "text": f"The model said: {reply.get('text', '')}"}]}
