"""test_input_required_result_request_state: see its app.json."""

from platform_sdk import elicit

OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def handle(request):
    answer = request.ask({"confirm": elicit("Please confirm", OK)})["confirm"]
    # The platform checked the echoed requestState (seal, caller, arguments) before this ran.
    return {"content": [{"type": "text", "text": f"state-ok: action={answer['action']}"}]}
