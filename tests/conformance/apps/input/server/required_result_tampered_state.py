"""test_input_required_result_tampered_state: Asks one question; a tampered requestState is refused."""

from platform_sdk import elicit

OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def handle(request):
    request.ask({"confirm": elicit("Please confirm", OK)})
    return {"content": [{"type": "text", "text": "The sealed state came back intact."}]}
