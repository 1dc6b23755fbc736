"""confirm_delete: asks the user to confirm (one elicitation), then answers."""

from platform_sdk import elicit

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def handle(request):
    filename = request.body.get("filename", "the file")
    answer = request.ask({"confirm": elicit(f"Delete {filename}?", CONFIRM)})["confirm"]
    confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm") is True
    return {"content": [{"type": "text", "text": f"Deleted {filename}" if confirmed else "Kept it"}]}
