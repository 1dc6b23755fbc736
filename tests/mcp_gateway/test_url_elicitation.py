"""URL-mode elicitation (docs/egress.md, docs/mcp.md): a step the person takes in their browser is
asked with a URL where the client declares URL mode, and the call goes on once it is taken.

- A member who has not connected the account a tool's outbound request needs is sent to the
  console's Connected accounts page; they connect there (the console's real OAuth flow against a
  fake provider) and the same call runs with their token.
- A ``confirm`` tool called by a client that takes URL questions but no forms is sent to its
  approval's console page; the person approves there (the approvals API) and the call runs once.

Through the official SDK client in both protocol eras; a client without URL mode gets the answer it
always got (an error result with the link, the approval result).
"""

from __future__ import annotations

import anyio
import mcp.types as types
import pytest
from django.test import Client as Browser
from mcp import Client
from mcp.types import ElicitResult

from apps_runtime.models import OutboundConnection
from mcp_gateway.models import Approval
from mcp_gateway.tools.pipeline.asks import asks_by_url
from mcp_gateway.transport.in_process import connect
from tests.apps_runtime.test_egress_connections import _connect_in_console, app, crm  # noqa: F401
from tests.mcp_gateway.conftest import mcp_client
from tests.mcp_gateway.test_confirmation import FILES, MANIFEST, WIPE, outcomes, runs

pytestmark = pytest.mark.django_db(transaction=True)

ERAS = ["legacy", "2026-07-28"]
LOOKUP = "acme_crm_tools_lookup"
BASE = "http://platform.test"


class Person:
    """The person behind the client: each URL question asked, the step they take at the page (in a
    worker thread, as a browser would, outside the event loop), then their answer."""

    def __init__(self, step=None, action: str = "accept"):
        self.step = step
        self.action = action
        self.asked: list = []

    async def __call__(self, context, params):
        self.asked.append(params)
        if self.step is not None:
            await anyio.to_thread.run_sync(self.step, params)
        return ElicitResult(action=self.action)


class Notes:
    """The notifications the client received."""

    def __init__(self):
        self.seen: list = []

    async def __call__(self, message):
        if isinstance(message, types.ServerNotification | types.ElicitCompleteNotification):
            self.seen.append(getattr(message, "root", message))

    def completed(self) -> list[str]:
        return [n.params.elicitation_id for n in self.seen if isinstance(n, types.ElicitCompleteNotification)]


def _lookup(raw: str, crm, mode: str, **options) -> types.CallToolResult:  # noqa: F811
    async def main():
        async with connect("acme", raw, mode=mode, **options) as client:
            return await client.call_tool(LOOKUP, {"url": f"{crm.base}/me"})

    return anyio.run(main)


@pytest.mark.parametrize("mode", ERAS)
def test_a_member_asked_to_connect_connects_and_the_call_goes_on(app, crm, make_token, settings, mode):  # noqa: F811
    settings.PUBLIC_BASE_URL = BASE
    _, raw = make_token(app, "bob")
    person = Person(lambda _params: _connect_in_console("bob", crm, "token-bob"))
    notes = Notes()

    result = _lookup(raw, crm, mode, elicitation_callback=person, message_handler=notes)

    assert result.is_error is False, result.content
    assert crm.seen[-1].path == "/me" and crm.seen[-1].headers["authorization"] == "Bearer token-bob"
    [asked] = person.asked
    assert asked.mode == "url" and asked.url == f"{BASE}/console/acme/accounts/"
    assert "your own crm account" in asked.message
    if mode == "legacy":
        assert asked.elicitation_id and notes.completed() == [asked.elicitation_id]
    else:
        assert asked.elicitation_id is None  # 2026-07-28 dropped it: the retry carries the answer
    assert outcomes(LOOKUP) == ["input_required", "ok"]  # asked, then run with the member's token


@pytest.mark.parametrize("mode", ERAS)
def test_a_client_without_url_mode_gets_the_link_as_before(app, crm, make_token, settings, mode):  # noqa: F811
    settings.PUBLIC_BASE_URL = BASE
    _, raw = make_token(app, "bob")

    result = _lookup(raw, crm, mode)  # no elicitation capability at all

    assert result.is_error is True
    text = result.content[0].text
    assert "connect your crm account first" in text and f"{BASE}/console/acme/accounts/" in text


def test_with_no_public_origin_known_the_client_gets_the_link_unasked(app, crm, make_token, settings):  # noqa: F811
    settings.PUBLIC_BASE_URL = ""  # and an in-process request has no origin: no absolute URL to send
    _, raw = make_token(app, "bob")
    person = Person()

    result = _lookup(raw, crm, "legacy", elicitation_callback=person)

    assert result.is_error is True and "connect your crm account first" in result.content[0].text
    assert person.asked == []


@pytest.mark.parametrize("mode", ERAS)
def test_declined_or_not_connected_answers_the_link_and_nothing_ran_with_a_token(
    app,  # noqa: F811
    crm,  # noqa: F811
    make_token,
    settings,
    mode,
):
    settings.PUBLIC_BASE_URL = BASE
    settings.MCP_CONFIRM_SECONDS = 2  # how long an accepted question waits for the step
    _, raw = make_token(app, "bob")

    declined = _lookup(raw, crm, mode, elicitation_callback=Person(action="decline"))
    went_nowhere = _lookup(raw, crm, mode, elicitation_callback=Person())  # accepts, never connects

    for result in (declined, went_nowhere):
        assert result.is_error is True and "connect your crm account first" in result.content[0].text
    assert not OutboundConnection.all_tenants.exists()
    assert not [s for s in crm.seen if s.path == "/me"]


def test_only_a_client_declaring_url_mode_is_asked_by_url():
    def declared(**elicitation) -> types.ClientCapabilities:
        return types.ClientCapabilities(elicitation=types.ElicitationCapability(**elicitation))

    assert asks_by_url(declared(url=types.UrlElicitationCapability())) is True
    assert asks_by_url(declared(form=types.FormElicitationCapability(), url=types.UrlElicitationCapability()))
    assert asks_by_url(declared()) is False  # an empty elicitation capability is form mode only
    assert asks_by_url(declared(form=types.FormElicitationCapability())) is False
    assert asks_by_url(types.ClientCapabilities()) is False and asks_by_url(None) is False


# --- a confirm tool, from a client that opens pages but renders no forms ---


class UrlOnlyClient(Client):
    """The official SDK client declaring URL-mode elicitation only (``elicitation: {url: {}}``), as a
    client that can open a page but render no form does (the SDK's own declares both modes)."""

    async def _build_session(self, exit_stack):
        session = await super()._build_session(exit_stack)
        declared = session._build_capabilities
        url_only = types.ElicitationCapability(url=types.UrlElicitationCapability())
        session._build_capabilities = lambda version: declared(version).model_copy(
            update={"elicitation": url_only}
        )
        return session


@pytest.fixture
def ledger(acme, make_member, make_token, deploy, settings):
    settings.PUBLIC_BASE_URL = BASE
    make_member(acme, "alice")
    deploy(acme, MANIFEST, FILES)
    return make_token(acme, "alice")[1]


def _decide(raw: str, approval_id: str, approve: bool) -> None:
    """The person's decision through the approvals API (the console's page posts the same)."""
    answer = Browser().post(
        f"/api/tenants/acme/approvals/{approval_id}",
        {"approve": approve},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert answer.status_code == 200, answer.content


def _wipe(raw: str, mode: str, **options) -> types.CallToolResult:
    async def main():
        async with connect("acme", raw, mode=mode, **options) as client:
            return await client.call_tool(WIPE, {"account": "acct-1"})

    return anyio.run(main)


def _approval_id(params) -> str:
    return params.url.rsplit("/", 1)[-1]


@pytest.mark.parametrize("mode", ERAS)
def test_a_confirm_tool_asks_by_url_for_its_approval_and_runs_once_approved(ledger, mode):
    person = Person(lambda params: _decide(ledger, _approval_id(params), True))
    notes = Notes()

    result = _wipe(
        ledger, mode, client_type=UrlOnlyClient, elicitation_callback=person, message_handler=notes
    )

    assert result.is_error is False, result.content
    assert result.structured_content == {"wiped": "acct-1"} and runs() == 1
    [asked] = person.asked
    approval = Approval.all_tenants.get()
    assert asked.mode == "url" and asked.url == f"{BASE}/console/acme/approvals/{approval.public_id}"
    assert approval.public_id in asked.message and approval.status == "used"
    if mode == "legacy":
        assert asked.elicitation_id == approval.public_id
        assert notes.completed() == [approval.public_id]
    assert outcomes() == ["approval_required", "confirmed"]
    # The approval ran its one run: a replay is refused, as from any client.
    again = _wipe(ledger, mode, client_type=UrlOnlyClient, elicitation_callback=Person())
    assert again.is_error is True and "already ran once" in again.content[0].text and runs() == 1


@pytest.mark.parametrize("mode", ERAS)
def test_the_call_waits_for_a_decision_made_after_the_client_accepted(ledger, mode):
    person = Person()  # agrees to open the page; the decision comes later, from elsewhere

    async def main():
        async with connect(
            "acme", ledger, mode=mode, client_type=UrlOnlyClient, elicitation_callback=person
        ) as client:
            async with anyio.create_task_group() as tasks:

                async def decide_once_asked():
                    while not person.asked:
                        await anyio.sleep(0.05)
                    await anyio.to_thread.run_sync(_decide, ledger, _approval_id(person.asked[0]), True)

                tasks.start_soon(decide_once_asked)
                return await client.call_tool(WIPE, {"account": "acct-1"})

    result = anyio.run(main)

    assert result.is_error is False, result.content
    assert result.structured_content == {"wiped": "acct-1"} and runs() == 1


@pytest.mark.parametrize("mode", ERAS)
def test_a_call_denied_at_the_page_is_refused_with_who_denied_it(ledger, mode):
    person = Person(lambda params: _decide(ledger, _approval_id(params), False))

    result = _wipe(ledger, mode, client_type=UrlOnlyClient, elicitation_callback=person)

    assert result.is_error is True and "alice denied it" in result.content[0].text
    assert runs() == 0


@pytest.mark.parametrize("mode", ERAS)
def test_a_client_that_cannot_be_asked_still_gets_the_approval_result(ledger, mode):
    result = _wipe(ledger, mode)  # no elicitation capability

    assert result.is_error is True and runs() == 0
    approval = result.structured_content["approval"]
    assert approval["url"] == f"{BASE}/console/acme/approvals/{approval['id']}"


@pytest.mark.parametrize("mode", ERAS)
def test_over_http_a_url_only_client_is_asked_to_connect_and_the_call_goes_on(
    app,  # noqa: F811
    crm,  # noqa: F811
    mcp_url,
    live_url,
    make_token,
    settings,
    mode,
):
    """Over Streamable HTTP: a handshake-era session that takes URL questions only is answered on a
    stream, where its question travels; a 2026-07-28 client gets the input-required round."""
    settings.PUBLIC_BASE_URL = live_url  # read per call by the live server in this process
    _, raw = make_token(app, "bob")
    person = Person(lambda _params: _connect_in_console("bob", crm, "token-bob"))

    async def main():
        async with mcp_client(
            mcp_url(), raw, client_type=UrlOnlyClient, elicitation_callback=person
        ) as client:
            return await client.call_tool(LOOKUP, {"url": f"{crm.base}/me"})

    result = anyio.run(main)

    assert result.is_error is False, result.content
    assert person.asked[0].url == f"{live_url}/console/acme/accounts/"
    assert crm.seen[-1].headers["authorization"] == "Bearer token-bob"
