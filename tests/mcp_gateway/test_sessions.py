"""Open MCP sessions are capped per token, per member and per tenant; closed and idle sessions free
their slot, and at a token's or member's cap its least recently used idle session makes room."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from mcp_gateway.protocol.concurrency import SERVER_BUSY
from tests.support.mcp_wire import legacy_initialize

INITIALIZE = legacy_initialize()
ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def tokens(mcp_url, acme, make_tenant, make_member, make_token):
    """Two tokens of acme's reader, one of acme's admin, and a token of another tenant."""
    other = make_tenant("other")
    make_member(other, "bob")
    return {
        "first": make_token(acme, "reader")[1],
        "second": make_token(acme, "reader")[1],
        "admin": make_token(acme, "admin")[1],
        "other": make_token(other, "bob")[1],
    }


class Sessions:
    """Raw HTTP against the endpoint: opens sessions with initialize, closes them with DELETE."""

    def __init__(self, http: httpx2.AsyncClient, mcp_url):
        self.http = http
        self.mcp_url = mcp_url
        self.opened: list[tuple[str, str, str]] = []

    async def open(self, token: str, slug: str = "acme") -> httpx2.Response:
        response = await self.http.post(
            self.mcp_url(slug),
            headers={"Authorization": f"Bearer {token}", "Accept": ACCEPT},
            json=INITIALIZE,
        )
        if response.status_code == 200:
            self.opened.append((slug, token, response.headers["mcp-session-id"]))
        return response

    async def close(self, slug: str, token: str, session_id: str) -> httpx2.Response:
        return await self.http.delete(
            self.mcp_url(slug), headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session_id}
        )

    def busy(self, slug: str, token: str, session_id: str):
        """An open GET stream: the session has a request in flight, so it is not idle."""
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "text/event-stream",
            "Mcp-Session-Id": session_id,
        }
        return self.http.stream("GET", self.mcp_url(slug), headers=headers)

    async def ping(self, slug: str, token: str, session_id: str) -> httpx2.Response:
        return await self.http.post(
            self.mcp_url(slug),
            headers={"Authorization": f"Bearer {token}", "Accept": ACCEPT, "Mcp-Session-Id": session_id},
            json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
        )


def with_sessions(mcp_url, scenario):
    async def main():
        async with httpx2.AsyncClient(timeout=30) as http:
            sessions = Sessions(http, mcp_url)
            try:
                return await scenario(sessions)
            finally:  # leave no session behind for the next test
                for opened in sessions.opened:
                    await sessions.close(*opened)

    return anyio.run(main)


def assert_too_many(response: httpx2.Response, limit: str) -> None:
    assert response.status_code == 429
    assert int(response.headers["retry-after"]) >= 1
    error = response.json()["error"]
    assert error["code"] == SERVER_BUSY
    assert error["data"]["limit"] == limit
    assert error["data"]["errorId"].startswith("err_")


def test_the_21st_session_of_one_token_ends_its_least_recently_used_idle_session(mcp_url, tokens):
    async def scenario(sessions: Sessions):
        first = [await sessions.open(tokens["first"]) for _ in range(20)]
        ids = [r.headers["mcp-session-id"] for r in first]
        used = await sessions.ping("acme", tokens["first"], ids[0])  # the oldest is now the most recent
        newest = await sessions.open(tokens["first"])
        pings = [await sessions.ping("acme", tokens["first"], sid) for sid in ids]
        return (
            first,
            used,
            newest,
            pings,
            await sessions.open(tokens["second"]),
            await sessions.open(tokens["other"], "other"),
        )

    first, used, newest, pings, same_tenant, other_tenant = with_sessions(mcp_url, scenario)
    assert [r.status_code for r in first] == [200] * 20 and used.status_code == 200
    assert newest.status_code == 200
    # The second session was the least recently used: it alone was ended.
    assert [r.status_code for r in pings] == [200, 404] + [200] * 18
    assert same_tenant.status_code == 200
    assert other_tenant.status_code == 200


def test_a_token_whose_sessions_are_all_busy_is_refused_with_the_real_wait(mcp_url, tokens, settings):
    settings.MCP_SESSIONS_PER_TOKEN = 1
    settings.MCP_SESSION_IDLE_SECONDS = 300
    token = tokens["first"]

    async def scenario(sessions: Sessions):
        session_id = (await sessions.open(token)).headers["mcp-session-id"]
        async with sessions.busy("acme", token, session_id) as stream:
            assert stream.status_code == 200
            refused = await sessions.open(token)
        return refused, await sessions.ping("acme", token, session_id)

    refused, still_open = with_sessions(mcp_url, scenario)
    assert_too_many(refused, "token")
    # Busy sessions: no idle countdown has started, so the wait is at least the whole idle timeout.
    assert int(refused.headers["retry-after"]) == 300
    assert still_open.status_code == 200  # never ended while in use


def test_a_member_with_many_credentials_cannot_lock_the_tenant_out(mcp_url, tokens, settings):
    """Issue 26 item 3: one member's tokens and OAuth connections count together, so the tenant's
    other members and its admin still connect."""
    settings.MCP_SESSIONS_PER_MEMBER = 3
    settings.MCP_SESSIONS_PER_TENANT = 4

    async def scenario(sessions: Sessions):
        mine = [await sessions.open(tokens[name]) for name in ("first", "second") * 4]
        alive = [
            await sessions.ping("acme", tokens[name], r.headers["mcp-session-id"])
            for name, r in zip(("first", "second") * 4, mine, strict=True)
        ]
        return mine, alive, await sessions.open(tokens["admin"])

    mine, alive, admin = with_sessions(mcp_url, scenario)
    assert [r.status_code for r in mine] == [200] * 8
    # Each new session ended the oldest idle one of its own token (the member's oldest when its
    # token had none): three stay open, the newest of each token among them.
    assert [r.status_code for r in alive] == [404, 404, 404, 404, 200, 404, 200, 200]
    assert admin.status_code == 200


def test_a_tenant_at_its_session_cap_refuses_its_other_tokens_but_not_other_tenants(
    mcp_url, tokens, settings
):
    settings.MCP_SESSIONS_PER_TENANT = 3

    async def scenario(sessions: Sessions):
        opened = [await sessions.open(tokens[name]) for name in ("first", "first", "second")]
        return opened, await sessions.open(tokens["second"]), await sessions.open(tokens["other"], "other")

    opened, refused, other_tenant = with_sessions(mcp_url, scenario)
    assert [r.status_code for r in opened] == [200] * 3
    assert_too_many(refused, "tenant")  # another member's idle sessions are never ended for it
    # The real wait: until the first idle session of the tenant is reaped (600 s after its use).
    assert 500 < int(refused.headers["retry-after"]) <= 600
    assert other_tenant.status_code == 200


def test_closing_a_session_frees_its_slot(mcp_url, tokens, settings):
    settings.MCP_SESSIONS_PER_TENANT = 2

    async def scenario(sessions: Sessions):
        await sessions.open(tokens["first"])
        await sessions.open(tokens["admin"])
        refused = await sessions.open(tokens["second"])
        closed = await sessions.close(*sessions.opened.pop(0))
        return refused, closed, await sessions.open(tokens["second"])

    refused, closed, reopened = with_sessions(mcp_url, scenario)
    assert_too_many(refused, "tenant")
    assert closed.status_code == 200
    assert reopened.status_code == 200


def test_an_idle_session_is_reaped_and_frees_its_slot(mcp_url, tokens, settings):
    settings.MCP_SESSIONS_PER_TOKEN = 1
    settings.MCP_SESSION_IDLE_SECONDS = 0.5
    token = tokens["first"]

    async def scenario(sessions: Sessions):
        opened = await sessions.open(token)
        session_id = opened.headers["mcp-session-id"]
        # An open GET stream keeps the session busy (not idle) until the stream is closed.
        async with sessions.busy("acme", token, session_id) as stream:
            assert stream.status_code == 200
            refused = await sessions.open(token)
        with anyio.fail_after(20):
            while (reopened := await sessions.open(token)).status_code != 200:
                await anyio.sleep(0.1)
        return refused, reopened, await sessions.ping("acme", token, session_id)

    refused, reopened, gone = with_sessions(mcp_url, scenario)
    assert_too_many(refused, "token")
    assert reopened.status_code == 200
    assert gone.status_code == 404  # the reaped session is gone for good
