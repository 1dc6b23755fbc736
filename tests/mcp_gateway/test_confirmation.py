"""Tools marked "confirm": the official SDK client's user is asked first, in both protocol eras."""

from __future__ import annotations

import anyio
import mcp.types as types
import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS, ElicitResult, InputRequiredResult

from apps_runtime.models import Record
from mcp_gateway.limits import rate_limits
from mcp_gateway.models import ToolCallAudit, ToolTask
from mcp_gateway.tools.call.calls import call_tool, run_call
from mcp_gateway.tools.call.confirmation import Confirmation, Verdict
from mcp_gateway.tools.pipeline.asks import Asked
from mcp_gateway.tools.pipeline.call_context import CallContext
from tenants import actions
from tenants.callers import caller_for
from tenants.scoping import access_user
from tests.mcp_gateway.conftest import mcp_client
from tests.support.task_client import create_task, send, wait_until_finished

ERAS = ["legacy", "2026-07-28"]
WIPE = "acme_ledger_wipe"
WIPE_LATER = "acme_ledger_wipe_later"
WIPE_ONCE = "acme_ledger_wipe_once"
PEEK = "acme_ledger_peek"
MANIFEST = {
    "name": "ledger",
    "access": "user",
    "collections": {
        "wipes": {
            "schema": {"type": "object", "properties": {"account": {"type": "string"}}},
            "read": "user",
            "write": "user",
        }
    },
    "routes": {
        "POST /accounts/{account}/wipe": {"handler": "server/wipe.py", "auth": "user"},
        "GET /accounts/{account}": {"handler": "server/peek.py", "auth": "user"},
    },
    "mcp": {
        "tools": [
            {
                "name": "wipe",
                "title": "Wipe an account",
                "description": "Deletes every entry of an account; it cannot be undone.",
                "route": "POST /accounts/{account}/wipe",
                "confirm": True,
                "inputSchema": {
                    "type": "object",
                    "properties": {"account": {"type": "string"}, "reason": {"type": "string"}},
                    "required": ["account"],
                    "additionalProperties": False,
                },
                "annotations": {"readOnlyHint": False, "destructiveHint": True},
            },
            {
                "name": "wipe_later",
                "title": "Wipe an account in the background",
                "description": "Deletes every entry of an account as an MCP task; it cannot be undone.",
                "route": "POST /accounts/{account}/wipe",
                "confirm": True,
                "task": "optional",
                "inputSchema": {
                    "type": "object",
                    "properties": {"account": {"type": "string"}},
                    "required": ["account"],
                },
                "annotations": {"readOnlyHint": False, "destructiveHint": True},
            },
            {
                "name": "wipe_once",
                "title": "Wipe an account, once an hour",
                "description": "Deletes every entry of an account, at most once an hour.",
                "route": "POST /accounts/{account}/wipe",
                "confirm": True,
                "rateLimit": {"calls": 1, "per": "hour"},
                "inputSchema": {
                    "type": "object",
                    "properties": {"account": {"type": "string"}},
                    "required": ["account"],
                },
                "annotations": {"readOnlyHint": False, "destructiveHint": True},
            },
            {
                "name": "peek",
                "title": "Look at an account",
                "description": "Shows an account; it changes nothing.",
                "route": "GET /accounts/{account}",
                "inputSchema": {
                    "type": "object",
                    "properties": {"account": {"type": "string"}},
                    "required": ["account"],
                },
                "annotations": {"readOnlyHint": True, "destructiveHint": False},
            },
        ]
    },
}
FILES = {
    # Each run leaves a record behind, so a test sees whether (and how often) the route ran.
    "server/wipe.py": (
        "def handle(request):\n"
        "    request.records.create('wipes', {'account': request.params['account']})\n"
        "    return {'wiped': request.params['account']}\n"
    ),
    "server/peek.py": "def handle(request):\n    return {'account': request.params['account']}\n",
}


@pytest.fixture
def ledger(mcp_url, make_tenant, make_member, make_token, deploy):
    tenant = make_tenant("acme")
    make_member(tenant, "alice")
    make_member(tenant, "bob")
    deploy(tenant, MANIFEST, FILES)
    return tenant


@pytest.fixture
def alice(ledger, make_token):
    return make_token(ledger, "alice")[1]


class User:
    """The person behind the client: answers each confirmation the same way, and remembers them."""

    def __init__(self, action: str, content: dict | None = None):
        self.answer = ElicitResult(action=action, content=content)
        self.asked: list = []

    async def __call__(self, context, params):
        self.asked.append(params)
        return self.answer


def call(url: str, raw: str, mode: str, name: str = WIPE, arguments=None, **client_kwargs):
    async def main():
        async with mcp_client(url, raw, mode=mode, **client_kwargs) as client:
            return await client.call_tool(name, arguments or {"account": "acct-1"})

    return anyio.run(main)


def runs() -> int:
    return Record.objects.filter(tenant__slug="acme", collection="wipes").count()


def outcomes(tool: str = WIPE) -> list[str]:
    rows = ToolCallAudit.objects.filter(tenant__slug="acme", wire_name=tool).order_by("id")
    return list(rows.values_list("outcome", flat=True))


@pytest.mark.parametrize("mode", ERAS)
def test_an_accepted_confirmation_runs_the_route_once_and_is_audited_confirmed(mcp_url, alice, mode):
    user = User("accept", {"confirm": True})

    result = call(
        mcp_url(),
        alice,
        mode,
        arguments={"account": "acct-1", "reason": "closing"},
        elicitation_callback=user,
    )

    assert result.is_error is False and result.structured_content == {"wiped": "acct-1"}
    assert len(user.asked) == 1
    question = user.asked[0]
    assert question.mode == "form" and question.requested_schema["required"] == ["confirm"]
    assert '"Wipe an account"' in question.message and WIPE in question.message
    assert '"account": "acct-1"' in question.message and '"reason": "closing"' in question.message
    assert runs() == 1
    assert outcomes() == ["confirmed"]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (ElicitResult(action="decline"), "The user declined"),
        (ElicitResult(action="cancel"), "The user cancelled"),
        (ElicitResult(action="accept", content={"confirm": False}), "The user declined"),
    ],
    ids=["decline", "cancel", "accept-unticked"],
)
def test_a_declined_or_cancelled_confirmation_runs_nothing(mcp_url, alice, mode, answer, said):
    user = User(answer.action, answer.content)

    result = call(mcp_url(), alice, mode, elicitation_callback=user)

    assert result.is_error is True
    assert result.content[0].text.startswith(said) and "did not run" in result.content[0].text
    assert len(user.asked) == 1
    assert runs() == 0
    assert outcomes() == ["declined"]


def test_a_question_not_answered_in_time_runs_nothing(mcp_url, alice, settings):
    settings.MCP_CONFIRM_SECONDS = 0.5  # read per call by the live server in this process

    async def never_answers(context, params):
        await anyio.sleep_forever()

    result = call(mcp_url(), alice, "legacy", elicitation_callback=never_answers)

    assert result.is_error is True and result.content[0].text.startswith("The user cancelled")
    assert runs() == 0
    assert outcomes() == ["declined"]


def test_a_client_answering_the_question_with_an_error_runs_nothing(mcp_url, alice):
    async def refuses(context, params):
        return types.ErrorData(code=types.INVALID_REQUEST, message="no forms here")

    result = call(mcp_url(), alice, "legacy", elicitation_callback=refuses)

    assert result.is_error is True and result.content[0].text.startswith("The user cancelled")
    assert runs() == 0


@pytest.mark.parametrize("mode", ERAS)
def test_a_client_that_cannot_ask_gets_an_approval_to_decide_and_nothing_runs(mcp_url, alice, mode):
    result = call(mcp_url(), alice, mode)  # no elicitation_callback: no elicitation capability

    assert result.is_error is True  # decided out of band (test_approvals.py)
    assert "cannot ask for it" in result.content[0].text and "approval" in result.structured_content
    assert runs() == 0
    assert outcomes() == ["approval_required"]


@pytest.mark.parametrize("mode", ERAS)
def test_with_the_setting_off_confirm_tools_run_without_asking(mcp_url, ledger, alice, mode):
    actions.set_tenant_setting(ledger, "confirmDestructiveTools", False, acting_user=None)
    user = User("decline")

    asking = call(mcp_url(), alice, mode, elicitation_callback=user)
    unable = call(mcp_url(), alice, mode, arguments={"account": "acct-2"})

    assert asking.is_error is False and unable.is_error is False
    assert user.asked == []
    assert runs() == 2
    assert outcomes() == ["ok", "ok"]


@pytest.mark.parametrize("mode", ERAS)
def test_tools_without_confirm_are_never_asked_about(mcp_url, alice, mode):
    user = User("decline")

    result = call(mcp_url(), alice, mode, name=PEEK, elicitation_callback=user)

    assert result.is_error is False and user.asked == []


@pytest.mark.parametrize("mode", ERAS)
def test_a_call_over_its_rate_limit_is_refused_without_asking(mcp_url, alice, mode, monkeypatch):
    monkeypatch.setattr(rate_limits, "clock", lambda: 1_800_000_000.0)  # both calls in one window
    user = User("accept", {"confirm": True})

    first = call(mcp_url(), alice, mode, name=WIPE_ONCE, elicitation_callback=user)
    second = call(mcp_url(), alice, mode, name=WIPE_ONCE, elicitation_callback=user)

    assert first.is_error is False
    assert second.is_error is True and second.content[0].text.startswith("Rate limit reached")
    assert len(user.asked) == 1 and runs() == 1
    assert outcomes(WIPE_ONCE) == ["confirmed", "rate_limited"]


@pytest.mark.parametrize("mode", ERAS)
def test_invalid_arguments_are_refused_before_anyone_is_asked(mcp_url, alice, mode):
    user = User("accept", {"confirm": True})

    result = call(mcp_url(), alice, mode, arguments={"account": 7}, elicitation_callback=user)

    assert result.is_error is True and result.content[0].text.startswith("Invalid arguments")
    assert user.asked == [] and runs() == 0
    assert outcomes() == ["invalid_arguments"]


# 2026-07-28: the answer comes back in a retried call with the sealed requestState.

ACCEPT = {"confirm": ElicitResult(action="accept", content={"confirm": True})}


async def first_round(client, arguments) -> InputRequiredResult:
    asked = await client.session.call_tool(WIPE, arguments, allow_input_required=True)
    assert isinstance(asked, InputRequiredResult)
    assert asked.request_state and set(asked.input_requests) == {"confirm"}
    return asked


def modern(url, raw, body):
    async def main():
        async with mcp_client(url, raw, mode="2026-07-28", elicitation_callback=User("accept")) as client:
            return await body(client)

    return anyio.run(main)


def test_a_request_state_cannot_be_answered_with_another_token(mcp_url, ledger, alice, make_token):
    asked = modern(mcp_url(), alice, lambda client: first_round(client, {"account": "acct-1"}))

    async def answer(client):
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool(
                WIPE, {"account": "acct-1"}, input_responses=ACCEPT, request_state=asked.request_state
            )
        return refused.value.error.code

    # Another user, and the same user with another token.
    for other in (make_token(ledger, "bob")[1], make_token(ledger, "alice")[1]):
        assert modern(mcp_url(), other, answer) == INVALID_PARAMS
    assert runs() == 0

    async def answer_as_asked(client):
        return await client.session.call_tool(
            WIPE, {"account": "acct-1"}, input_responses=ACCEPT, request_state=asked.request_state
        )

    assert modern(mcp_url(), alice, answer_as_asked).is_error is False  # the state itself was good
    assert runs() == 1
    assert outcomes() == ["denied", "denied", "confirmed"]  # the round that asks is not a call of its own


def test_a_request_state_cannot_be_answered_for_other_arguments(mcp_url, alice):
    async def body(client):
        asked = await first_round(client, {"account": "acct-1"})
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool(
                WIPE, {"account": "acct-2"}, input_responses=ACCEPT, request_state=asked.request_state
            )
        as_asked = await client.session.call_tool(
            WIPE, {"account": "acct-1"}, input_responses=ACCEPT, request_state=asked.request_state
        )
        return refused.value.error.code, as_asked.structured_content

    assert modern(mcp_url(), alice, body) == (INVALID_PARAMS, {"wiped": "acct-1"})
    assert runs() == 1
    assert outcomes() == ["denied", "confirmed"]


def test_an_answer_without_the_request_state_is_asked_again(mcp_url, alice):
    async def body(client):
        return await client.session.call_tool(
            WIPE, {"account": "acct-1"}, input_responses=ACCEPT, allow_input_required=True
        )

    assert isinstance(modern(mcp_url(), alice, body), InputRequiredResult)
    assert runs() == 0


def test_a_replayed_answer_is_asked_again_instead_of_running_again(mcp_url, alice):
    async def body(client):
        asked = await first_round(client, {"account": "acct-1"})
        answered = [
            await client.session.call_tool(
                WIPE,
                {"account": "acct-1"},
                input_responses=ACCEPT,
                request_state=asked.request_state,
                allow_input_required=True,
            )
            for _ in range(2)
        ]
        return [type(result).__name__ for result in answered]

    assert modern(mcp_url(), alice, body) == ["CallToolResult", "InputRequiredResult"]
    assert runs() == 1
    assert outcomes() == ["confirmed"]


# Task-augmented calls (2025-11-25): the user is asked before the task is created.


def test_a_confirmed_task_call_creates_the_task_and_its_run_goes_ahead(mcp_url, alice):
    user = User("accept", {"confirm": True})

    async def main():
        async with mcp_client(mcp_url(), alice, elicitation_callback=user) as client:
            created = await create_task(client, WIPE_LATER, {"account": "acct-1"})
            return await wait_until_finished(client, created.task.task_id)

    assert anyio.run(main).status == "completed"
    assert len(user.asked) == 1 and runs() == 1
    assert outcomes(WIPE_LATER) == ["task_created", "confirmed"]


def test_a_declined_task_call_creates_no_task(mcp_url, alice):
    user = User("decline")

    async def main():
        async with mcp_client(mcp_url(), alice, elicitation_callback=user) as client:
            request = types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name=WIPE_LATER, arguments={"account": "acct-1"}, task=types.TaskMetadata()
                )
            )
            return types.CallToolResult.model_validate(await send(client, request))

    result = anyio.run(main)
    assert result.is_error is True and result.content[0].text.startswith("The user declined")
    assert not ToolTask.objects.filter(tenant__slug="acme").exists() and runs() == 0
    assert outcomes(WIPE_LATER) == ["declined"]


def test_the_pipeline_asks_before_anything_counts_runs_or_is_audited(ledger, monkeypatch):
    # One preflight per run: the question is an outcome of the call itself, asked only of a caller
    # that can confirm; a caller that cannot gets an approval to decide out of band, audited as such.
    monkeypatch.setattr(rate_limits, "clock", lambda: 1_800_000_000.0)  # every call in one window
    caller = caller_for(ledger, access_user("alice"))
    arguments = {"account": "acct-1"}

    asked = run_call(CallContext(ledger, caller, can_confirm=True), WIPE_ONCE, arguments)
    again = run_call(CallContext(ledger, caller, can_confirm=True), WIPE_ONCE, arguments)

    assert isinstance(asked, Asked) and asked.confirms and list(asked.requests) == ["confirm"]
    assert asked == again  # the first question counted nothing against the once-an-hour limit
    assert '"Wipe an account, once an hour"' in asked.requests["confirm"].params.message
    assert runs() == 0 and outcomes(WIPE_ONCE) == []
    ran = run_call(CallContext(ledger, caller), WIPE_ONCE, arguments, Confirmation(Verdict.ACCEPTED))
    assert ran.is_error is False and runs() == 1 and outcomes(WIPE_ONCE) == ["confirmed"]
    refused = call_tool(ledger, caller, WIPE, arguments)  # nobody to ask: an approval, audited
    assert refused.is_error is True and "approval" in refused.structured_content
    assert runs() == 1 and outcomes(WIPE) == ["approval_required"]
