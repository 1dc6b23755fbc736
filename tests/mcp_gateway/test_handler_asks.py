"""Handlers that ask their caller (``request.ask``): forms, sampling and roots, over several rounds,
with the official SDK client in both protocol eras (input-required rounds on 2026-07-28, server
requests on a handshake-era session)."""

from __future__ import annotations

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import MCPError

from mcp_gateway.models import ToolCallAudit
from tests.mcp_gateway.conftest import mcp_client
from tests.support.apps import _tool

ERAS = ["legacy", "2026-07-28"]
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR = {"type": "object", "properties": {"color": {"type": "string", "enum": ["red", "blue"]}}}
HANDLERS = {
    "greet": f"""
from platform_sdk import elicit

def handle(request):
    answer = request.ask({{"who": elicit("What is your name?", {NAME!r})}})["who"]
    if answer["action"] != "accept":
        return {{"greeting": None}}
    return {{"greeting": "Hello, " + answer["content"]["name"] + "!"}}
""",
    "everything": f"""
from platform_sdk import elicit, list_roots, sample

def handle(request):
    answers = request.ask({{
        "who": elicit("What is your name?", {NAME!r}),
        "poem": sample("Write a poem", max_tokens=50),
        "roots": list_roots(),
    }})
    return {{
        "name": answers["who"]["content"]["name"],
        "poem": answers["poem"]["content"]["text"],
        "roots": [root["uri"] for root in answers["roots"]["roots"]],
    }}
""",
    "two_steps": f"""
from platform_sdk import elicit

def handle(request):
    name = request.ask({{"step1": elicit("Step 1: your name?", {NAME!r})}})["step1"]["content"]["name"]
    color = request.ask({{"step2": elicit("Step 2: your color?", {COLOR!r})}})["step2"]["content"]["color"]
    return {{"summary": name + " likes " + color}}
""",
    "poem": """
from platform_sdk import sample

def handle(request):
    return {"poem": request.ask({"poem": sample("Write a poem")})["poem"]["content"]["text"]}
""",
    "nested_form": """
from platform_sdk import elicit

def handle(request):
    request.ask({"x": elicit("Address?", {"type": "object", "properties": {"a": {"type": "object"}}})})
    return {}
""",
    "polite": """
from platform_sdk import elicit, sample

def handle(request):
    questions = {"who": elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})}
    if request.can_ask("sampling"):
        questions["poem"] = sample("Write a poem")
    return {"asked": sorted(request.ask(questions))}
""",
}
PROMPT_HANDLER = f"""
from platform_sdk import elicit

def handle(request):
    who = request.ask({{"who": elicit("What is your name?", {NAME!r})}})["who"]["content"]["name"]
    return {{"messages": [{{"role": "user", "content": {{"type": "text", "text": "Write to " + who}}}}]}}
"""
MANIFEST = {
    "name": "survey",
    "routes": {f"POST /{name}": {"handler": f"server/{name}.py", "auth": "user"} for name in HANDLERS}
    | {"GET /letter": {"handler": "server/letter.py", "auth": "user"}},
    "mcp": {
        "tools": [_tool(name, f"POST /{name}") for name in HANDLERS],
        "prompts": [
            {"name": "letter", "description": "A letter to someone it asks about.", "route": "GET /letter"}
        ],
    },
}


@pytest.fixture
def token(mcp_url, acme, deploy, make_token):
    files = {f"server/{name}.py": source for name, source in HANDLERS.items()}
    deploy(acme, MANIFEST, files | {"server/letter.py": PROMPT_HANDLER})
    return make_token(acme, "member")[1]


async def user(context, params: types.ElicitRequestParams) -> types.ElicitResult:
    answers = {"What is your name?": {"name": "Ada"}, "Step 1: your name?": {"name": "Ada"}}
    return types.ElicitResult(action="accept", content=answers.get(params.message, {"color": "blue"}))


async def model(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    text = types.TextContent(type="text", text="Roses are red.")
    return types.CreateMessageResult(
        role="assistant", content=text, model="test-model", stop_reason="endTurn"
    )


async def roots(context) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])


def call(url, token, mode, tool, **callbacks):
    """The tool's result, or the MCPError it was refused with."""

    async def main():
        async with mcp_client(url, token, mode=mode, **callbacks) as client:
            try:
                return await client.call_tool(f"acme_survey_{tool}", {})
            except MCPError as err:
                return err

    return anyio.run(main)


@pytest.mark.parametrize("mode", ERAS)
def test_a_handler_asks_the_user_a_form_and_runs_with_the_answer(mcp_url, token, acme, mode):
    result = call(mcp_url(), token, mode, "greet", elicitation_callback=user)

    assert result.is_error is False
    assert result.structured_content == {"greeting": "Hello, Ada!"}
    rows = ToolCallAudit.objects.for_tenant(acme).order_by("created_at")
    outcomes = list(rows.values_list("outcome", flat=True))
    assert outcomes == [ToolCallAudit.Outcome.INPUT_REQUIRED, ToolCallAudit.Outcome.OK]


@pytest.mark.parametrize("mode", ERAS)
def test_a_handler_asks_for_a_form_the_models_answer_and_the_roots_at_once(mcp_url, token, mode):
    callbacks = {"elicitation_callback": user, "sampling_callback": model, "list_roots_callback": roots}
    result = call(mcp_url(), token, mode, "everything", **callbacks)

    assert result.structured_content == {
        "name": "Ada",
        "poem": "Roses are red.",
        "roots": ["file:///work/project"],
    }


@pytest.mark.parametrize("mode", ERAS)
def test_each_round_of_questions_reaches_the_handler_with_every_answer_so_far(mcp_url, token, mode):
    asked = []

    async def counting_user(context, params):
        asked.append(params.message)
        return await user(context, params)

    result = call(mcp_url(), token, mode, "two_steps", elicitation_callback=counting_user)

    assert result.structured_content == {"summary": "Ada likes blue"}
    assert asked == ["Step 1: your name?", "Step 2: your color?"]  # the first is never asked again


@pytest.mark.parametrize("mode", ERAS)
def test_a_handler_can_see_what_the_client_can_answer(mcp_url, token, mode):
    without = call(mcp_url(), token, mode, "polite", elicitation_callback=user)
    with_model = call(mcp_url(), token, mode, "polite", elicitation_callback=user, sampling_callback=model)

    assert without.structured_content == {"asked": ["who"]}
    assert with_model.structured_content == {"asked": ["poem", "who"]}


def test_a_question_a_2026_client_did_not_declare_is_refused_with_32021(mcp_url, token):
    refused = call(mcp_url(), token, "2026-07-28", "poem")  # no sampling callback: no sampling capability

    assert isinstance(refused, MCPError)
    assert refused.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert refused.error.data == {"requiredCapabilities": {"sampling": {}}}


def test_a_question_a_handshake_client_did_not_declare_is_an_error_result(mcp_url, token):
    result = call(mcp_url(), token, "legacy", "poem")

    assert result.is_error is True
    assert "sampling, which this client did not declare" in result.content[0].text


@pytest.mark.parametrize("mode", ERAS)
def test_a_question_that_is_not_a_flat_form_is_refused_naming_it(mcp_url, token, mode):
    result = call(mcp_url(), token, mode, "nested_form", elicitation_callback=user)

    assert result.is_error is True
    assert result.content[0].text == (
        "The tool asked for input the platform refuses: x.a: "
        "a form field is a string, number, integer, boolean or choice."
    )


def test_earlier_answers_travel_sealed_and_bound_to_the_caller_and_the_arguments(
    mcp_url, token, acme, make_token
):
    other = make_token(acme, "member")[1]
    step1 = {"step1": types.ElicitResult(action="accept", content={"name": "Ada"})}
    step2 = {"step2": types.ElicitResult(action="accept", content={"color": "red"})}

    async def main():
        async with mcp_client(mcp_url(), token, mode="2026-07-28", elicitation_callback=user) as client:
            session = client.session
            first = await session.call_tool("acme_survey_two_steps", {}, allow_input_required=True)
            second = await session.call_tool(
                "acme_survey_two_steps",
                {},
                input_responses=step1,
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(second, types.InputRequiredResult) and set(second.input_requests) == {"step2"}
            assert "Ada" not in second.request_state  # sealed, not merely encoded
            with pytest.raises(MCPError) as refused:  # the same state for other arguments
                await session.call_tool(
                    "acme_survey_two_steps",
                    {"x": 1},
                    input_responses=step2,
                    request_state=second.request_state,
                )
            assert refused.value.error.code == types.INVALID_PARAMS
            done = await session.call_tool(
                "acme_survey_two_steps", {}, input_responses=step2, request_state=second.request_state
            )
            assert done.structured_content == {"summary": "Ada likes red"}
        async with mcp_client(mcp_url(), other, mode="2026-07-28") as client:
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool(
                    "acme_survey_two_steps", {}, input_responses=step2, request_state=second.request_state
                )
            assert refused.value.error.code == types.INVALID_PARAMS

    anyio.run(main)


def test_a_route_that_asks_answers_its_front_end_with_400(live_url, token, acme):
    response = httpx2.post(
        f"{live_url}/t/acme/apps/survey/greet", headers={"Authorization": f"Bearer {token}"}, json={}
    )

    assert response.status_code == 400
    assert "only an MCP client can give" in response.json()["error"]


def get_letter(url, token, mode, **callbacks):
    async def main():
        async with mcp_client(url, token, mode=mode, **callbacks) as client:
            try:
                return await client.get_prompt("acme_survey_letter", {})
            except MCPError as err:
                return err

    return anyio.run(main)


def test_a_route_prompt_asks_a_2026_client_in_input_required_rounds(mcp_url, token):
    result = get_letter(mcp_url(), token, "2026-07-28", elicitation_callback=user)

    assert result.messages[0].content.text == "Write to Ada"


def test_a_route_prompt_that_asks_is_refused_on_a_handshake_session(mcp_url, token):
    refused = get_letter(mcp_url(), token, "legacy", elicitation_callback=user)

    assert isinstance(refused, MCPError) and refused.error.code == types.INVALID_REQUEST
    assert "only 2026-07-28 clients answer in prompts/get" in refused.error.message
