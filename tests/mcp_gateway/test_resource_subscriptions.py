"""Subscriptions to resources and list changes of resources and prompts, in both protocol eras."""

from __future__ import annotations

import anyio
import pytest
from mcp import MCPError

from tenants import actions
from tests.mcp_gateway.conftest import mcp_client
from tests.support.resource_app import FILES, resource_manifest

# resources/subscribe is the 2025-11-25 way, tested on purpose beside subscriptions/listen.
pytestmark = pytest.mark.filterwarnings("ignore:resources/subscribe is removed")


@pytest.fixture
def app(mcp_url, acme, deploy, settings):
    settings.MCP_NOTIFY_INTERVAL_SECONDS = 0.05
    deploy(acme, resource_manifest(), FILES)
    return acme


@pytest.fixture
def token(app, make_token):
    return lambda username, **kwargs: make_token(app, username, **kwargs)[1]


async def new_case(client) -> str:
    return (await client.call_tool("acme_cases_create_case", {"client_name": "Ada"})).structured_content["id"]


def test_a_new_record_updates_a_route_resource_but_not_another_record(mcp_url, token):
    updated: list[str] = []
    heard = anyio.Event()
    writer_token, reader_token = token("writer"), token("reader")

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            updated.append(str(root.params.uri))
            heard.set()

    async def main():
        async with mcp_client(mcp_url(), writer_token) as writer:
            case_id = await new_case(writer)
            async with mcp_client(mcp_url(), reader_token, message_handler=on_message) as reader:
                await reader.subscribe_resource(f"cases://case_record/{case_id}")
                await reader.subscribe_resource("cases://summary")
                await new_case(writer)
                with anyio.fail_after(10):
                    await heard.wait()
                await anyio.sleep(0.3)  # more polls: nothing else changed
                return sorted(set(updated))

    # A new case changes the summary (a route over the app's records), not the first case's record.
    assert anyio.run(main) == ["cases://summary"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_record_write_reaches_the_subscriber_of_that_record(mcp_url, token, mode):
    heard = anyio.Event()
    updated: list[str] = []
    writer_token, reader_token = token("writer"), token("reader")

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            updated.append(str(root.params.uri))
            heard.set()

    async def rename_after_a_poll(writer, case_id):
        await anyio.sleep(0.2)  # the subscription's marker is taken; now the record changes
        renamed = await writer.call_tool("acme_cases_rename_case", {"case_id": case_id, "name": "Ada L."})
        assert not renamed.is_error

    async def main():
        async with mcp_client(mcp_url(), writer_token) as writer:
            case_id = await new_case(writer)
            uri = f"cases://case_record/{case_id}"
            async with mcp_client(mcp_url(), reader_token, mode=mode, message_handler=on_message) as reader:
                if mode == "legacy":
                    await reader.subscribe_resource(uri)
                    await rename_after_a_poll(writer, case_id)
                    with anyio.fail_after(10):
                        await heard.wait()
                    return uri, updated[0]
                async with reader.listen(resource_subscriptions=[uri]) as subscription:
                    await rename_after_a_poll(writer, case_id)
                    with anyio.fail_after(10):
                        async for event in subscription:
                            return uri, event.uri

    uri, heard_uri = anyio.run(main)
    assert str(heard_uri) == uri


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_caller_cannot_follow_a_resource_it_may_not_read(mcp_url, token, mode):
    member_token = token("member")

    async def main():
        async with mcp_client(mcp_url(), member_token, mode=mode) as member:
            if mode == "legacy":
                with pytest.raises(MCPError) as caught:
                    await member.subscribe_resource("cases://writers_note")
                return caught.value.error.code
            async with member.listen(resource_subscriptions=["cases://writers_note", "cases://logo"]) as sub:
                return sub.honored.resource_subscriptions

    found = anyio.run(main)
    assert found == (-32002 if mode == "legacy" else ["cases://logo"])


def test_legacy_sessions_hear_resource_and_prompt_list_changes_of_their_caller(mcp_url, token, app):
    methods: set[str] = set()
    both = anyio.Event()

    async def on_message(message):
        method = getattr(getattr(message, "root", message), "method", None)
        if method in ("notifications/resources/list_changed", "notifications/prompts/list_changed"):
            methods.add(method)
            if len(methods) == 2:
                both.set()

    member_token = token("member")

    async def main():
        async with mcp_client(mcp_url(), member_token, message_handler=on_message) as client:
            before = len((await client.list_resource_templates()).resource_templates)
            await client.list_prompts()
            await anyio.to_thread.run_sync(
                lambda: actions.add_member(app, "member", roles=["case_writer"], acting_user=None)
            )
            with anyio.fail_after(10):
                await both.wait()
            after = len((await client.list_resource_templates()).resource_templates)
            prompts = [p.name for p in (await client.list_prompts()).prompts]
            return before, after, prompts

    before, after, prompts = anyio.run(main)
    assert (before, after) == (0, 2) and "acme_cases_writers_only" in prompts


def test_2026_listeners_hear_resource_and_prompt_list_changes(mcp_url, token, app):
    member_token = token("member")

    async def main():
        async with mcp_client(mcp_url(), member_token, mode="2026-07-28") as client:
            async with client.listen(resources_list_changed=True, prompts_list_changed=True) as subscription:
                await anyio.to_thread.run_sync(
                    lambda: actions.add_member(app, "member", roles=["case_writer"], acting_user=None)
                )
                kinds = set()
                with anyio.fail_after(10):
                    async for event in subscription:
                        kinds.add(type(event).__name__)
                        if len(kinds) == 2:
                            return kinds

    assert anyio.run(main) == {"ResourcesListChanged", "PromptsListChanged"}
