"""test_missing_capability: Needs sampling: refused (-32021) when the client did not declare it."""

from platform_sdk import sample


def handle(request):
    reply = request.ask({"llm": sample("Say hello", max_tokens=20)})["llm"].get("content") or {}
    return {"content": [{"type": "text", "text": reply.get("text", "")}]}
