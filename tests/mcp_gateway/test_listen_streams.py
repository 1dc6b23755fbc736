"""subscriptions/listen streams (2026-07-28) are capped per token, member and tenant, end after their
lifetime and when their token is revoked, and /metrics counts them."""

from __future__ import annotations

import contextlib
import gc
import statistics
import time

import anyio
import pytest
from mcp import MCPError

from lowcode_platform.asgi import gateway
from mcp_gateway.protocol.concurrency import SERVER_BUSY
from tenants import actions
from tests.mcp_gateway.conftest import mcp_client
from tests.mcp_gateway.test_metrics import scrape, value

MODERN = "2026-07-28"


@pytest.fixture
def tokens(mcp_url, acme, deploy, make_tenant, make_member, make_token, settings):
    """Two tokens of acme's member, one of acme's reader, and one of another tenant's member."""
    settings.MCP_NOTIFY_INTERVAL_SECONDS = 0.05
    # The server outlives each test, and a new acme may get the last one's id: its streams must be
    # gone, or their last poll's version would read as a change of the new acme.
    assert anyio.run(streams_ended, None, 0) == 0
    deploy(acme)
    other = make_tenant("other")
    make_member(other, "bob")
    deploy(other)
    first_row, first = make_token(acme, "member")
    return {
        "first_row": first_row,
        "first": first,
        "second": make_token(acme, "member")[1],
        "reader": make_token(acme, "reader")[1],
        "other": make_token(other, "bob")[1],
    }


async def refusal(client, tenant_id: int | None = None, held: int | None = None) -> MCPError:
    """The error one more listen stream gets (the test fails if it is served).

    With ``held``: first check the server still holds that many streams of the tenant, so a held
    stream that ended (its connection dropped by a slow machine) is told apart from a cap not kept.
    """
    if held is not None:
        assert gateway.notifier.streams.count(tenant_id) == held, "a held listen stream ended early"
    with pytest.raises(MCPError) as refused:
        async with client.listen(tools_list_changed=True):
            pass
    return refused.value


def assert_refused(error: MCPError, limit: str) -> None:
    assert error.code == SERVER_BUSY
    assert error.data["limit"] == limit
    assert error.data["retryAfter"] >= 1
    assert error.data["errorId"].startswith("err_")


async def streams_ended(tenant_id: int | None, count: int) -> int:
    """Wait (bounded) until the server holds ``count`` streams of the tenant (None: of any tenant, and
    no tenant is polled); returns what it holds."""

    def held() -> int:
        if tenant_id is None and gateway.notifier.polled_tenants:
            return -1
        return gateway.notifier.streams.count(tenant_id)

    with anyio.move_on_after(10):
        while held() != count:
            gc.collect()  # a closed legacy session's connection may sit in a reference cycle
            await anyio.sleep(0.02)
    return held()


async def p50_of_tools_list(client, times: int = 100) -> float:
    durations = []
    for _ in range(times):
        started = time.perf_counter()
        await client.list_tools()
        durations.append(time.perf_counter() - started)
    return statistics.median(durations)


def test_one_member_is_capped_per_token_member_and_tenant_and_another_tenant_stays_fast(
    mcp_url, tokens, acme, settings
):
    settings.MCP_LISTEN_STREAMS_PER_TOKEN = 3
    settings.MCP_LISTEN_STREAMS_PER_MEMBER = 5
    settings.MCP_LISTEN_STREAMS_PER_TENANT = 6

    async def main():
        async with (
            mcp_client(mcp_url(), tokens["first"], mode=MODERN) as first,
            mcp_client(mcp_url(), tokens["second"], mode=MODERN) as second,
            mcp_client(mcp_url(), tokens["reader"], mode=MODERN) as reader,
            mcp_client(mcp_url("other"), tokens["other"], mode=MODERN) as other,
            contextlib.AsyncExitStack() as held,
        ):
            baseline = await p50_of_tools_list(other)
            for _ in range(3):
                await held.enter_async_context(first.listen(tools_list_changed=True))
            by_token = await refusal(first, acme.pk, 3)
            for _ in range(2):
                await held.enter_async_context(second.listen(tools_list_changed=True))
            by_member = await refusal(second, acme.pk, 5)
            await held.enter_async_context(reader.listen(tools_list_changed=True))
            by_tenant = await refusal(reader, acme.pk, 6)
            # 50 more, each refused. Kept short: a held stream carries no frames, so on a starved
            # machine a long run could reach the client's 60 s read timeout and drop one.
            refused_more = [await refusal(first, acme.pk, 6) for _ in range(50)]
            held_streams = gateway.notifier.streams.count(acme.pk)
            holding = await p50_of_tools_list(other)

            async def flood():  # the member keeps asking for more while the other tenant works
                while True:
                    with contextlib.suppress(MCPError):
                        async with first.listen(tools_list_changed=True):
                            pass

            async with anyio.create_task_group() as flooding:
                for _ in range(4):
                    flooding.start_soon(flood)
                flooded = await p50_of_tools_list(other)
                flooding.cancel_scope.cancel()
            async with other.listen(tools_list_changed=True):  # another tenant's own cap is untouched
                other_tenant_listens = True
            refusals = (by_token, by_member, by_tenant, *refused_more)
            return refusals, held_streams, other_tenant_listens, (baseline, holding, flooded)

    refusals, held_streams, other_listens, (baseline, holding, flooded) = anyio.run(main)
    assert_refused(refusals[0], "token")
    assert_refused(refusals[1], "member")
    assert_refused(refusals[2], "tenant")
    for refused in refusals[3:]:
        assert_refused(refused, "token")
    assert held_streams == 6 and other_listens
    # Measured, not asserted (no timing assertions). The flood runs in this process, beside the
    # server and the measuring client, so it shares their interpreter: an upper bound.
    print(
        f"\nother tenant's tools/list p50: {baseline * 1000:.1f} ms before; "
        f"{holding * 1000:.1f} ms ({holding / baseline:.2f}x) holding the capped streams after 53 refusals; "
        f"{flooded * 1000:.1f} ms ({flooded / baseline:.2f}x) during a flood of refused listens"
    )


def test_a_stream_ends_gracefully_when_its_lifetime_runs_out(mcp_url, tokens, acme, settings):
    settings.MCP_LISTEN_STREAM_SECONDS = 0.3

    async def main():
        async with mcp_client(mcp_url(), tokens["first"], mode=MODERN) as client:
            events = []
            with anyio.fail_after(10):
                async with client.listen(tools_list_changed=True) as subscription:
                    # A graceful close ends the loop; a dropped stream would raise SubscriptionLost.
                    events = [event async for event in subscription]
            return events, await streams_ended(acme.pk, 0)

    events, left = anyio.run(main)
    assert events == [] and left == 0


def test_revoking_the_token_closes_its_stream_before_the_next_change_reaches_it(mcp_url, tokens, acme):
    async def main():
        async with (
            mcp_client(mcp_url(), tokens["first"], mode=MODERN) as revoked,
            mcp_client(mcp_url(), tokens["reader"], mode=MODERN) as kept,
        ):
            async with (
                revoked.listen(tools_list_changed=True) as doomed,
                kept.listen(tools_list_changed=True) as alive,
            ):
                row = tokens["first_row"]
                await anyio.to_thread.run_sync(lambda: actions.revoke_token(row, acting_user=None))
                with anyio.fail_after(10):
                    heard_by_revoked = [event async for event in doomed]  # ends without hearing a change
                await anyio.to_thread.run_sync(
                    lambda: actions.add_member(acme, "member", roles=["case_reader"], acting_user=None)
                )
                with anyio.fail_after(10):
                    heard_by_kept = await alive.__anext__()
            return heard_by_revoked, heard_by_kept

    heard_by_revoked, heard_by_kept = anyio.run(main)
    assert heard_by_revoked == []
    assert type(heard_by_kept).__name__ == "ToolsListChanged"


def test_metrics_count_the_open_streams(mcp_url, live_url, tokens, acme):
    async def main():
        async with (
            mcp_client(mcp_url(), tokens["first"], mode=MODERN) as client,
            client.listen(tools_list_changed=True),
            client.listen(prompts_list_changed=True),
        ):
            during = await anyio.to_thread.run_sync(scrape, live_url)
        await streams_ended(acme.pk, 0)
        return during, await anyio.to_thread.run_sync(scrape, live_url)

    during, after = anyio.run(main)
    assert value(during, "lcp_mcp_listen_streams") == 2
    assert value(after, "lcp_mcp_listen_streams") == 0
