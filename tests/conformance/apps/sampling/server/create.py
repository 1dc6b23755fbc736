"""test_sampling_create: Tests server-initiated sampling (LLM completion request); served as test_sampling."""

from platform_sdk import sample


def handle(request):
    answers = request.ask({"llm": sample(request.body.get("prompt", ""), max_tokens=100)})
    reply = answers["llm"].get("content") or {}
    return {"content": [{"type": "text", "text": f"LLM response: {reply.get('text', 'No response')}"}]}
