"""test_input_required_result_list_roots: Asks the client for its roots (one roots/list round)."""

from platform_sdk import list_roots


def handle(request):
    roots = request.ask({"client_roots": list_roots()})["client_roots"].get("roots") or []
    shown = ", ".join(str(root.get("uri")) for root in roots if isinstance(root, dict)) or "none"
    return {"content": [{"type": "text", "text": f"Client roots: {shown}"}]}
