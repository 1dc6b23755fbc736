"""The built-in tools come from one registry (``mcp_gateway.tools.catalog.builtins.BUILTINS``):
what tools/list shows, what tools/call runs and the wire names a deploy may not take are all derived
from it."""

from __future__ import annotations

import anyio
import pytest

from apps_runtime.wire_names import BUILTIN_TOOLS
from mcp_gateway.tools.catalog import builtins
from mcp_gateway.tools.catalog.builtins import BUILTINS
from tenants.callers import caller_for
from tenants.scoping import access_user
from tests.mcp_gateway.conftest import mcp_client


def test_the_registry_holds_exactly_the_reserved_names_in_their_order():
    assert tuple(BUILTINS) == BUILTIN_TOOLS
    assert all(name == builtin.name for name, builtin in BUILTINS.items())


def test_a_builtin_registered_in_one_place_only_stops_the_registry():
    extra = builtins.Builtin("records_count", "Count", "Count.", dict, builtins.READS, "x.y")
    with pytest.raises(RuntimeError, match="BUILTIN_TOOLS"):
        builtins._registry(*BUILTINS.values(), extra)
    with pytest.raises(RuntimeError, match="BUILTIN_TOOLS"):
        builtins._registry(*list(BUILTINS.values())[1:])
    with pytest.raises(RuntimeError, match="BUILTIN_TOOLS"):  # one name twice
        builtins._registry(*BUILTINS.values(), BUILTINS["records_get"])


def test_tools_list_describes_each_builtin_as_the_registry_does_and_tools_call_runs_it(
    mcp_url, acme, deploy, make_token
):
    deploy(acme)
    raw = make_token(acme, "writer")[1]

    async def main():
        async with mcp_client(mcp_url(), raw) as client:
            listed = (await client.list_tools()).tools
            called = await client.call_tool("acme_collections_list", {})
            return listed, called

    listed, called = anyio.run(main)
    shown = {tool.name: tool for tool in listed}
    for name, builtin in BUILTINS.items():
        tool = shown[f"acme_{name}"]
        assert tool.title == builtin.title
        assert tool.description == builtin.description
        assert tool.input_schema == builtin.input_schema
        assert tool.output_schema == builtin.output_schema
        hints = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        assert {k: hints[k] for k in builtin.annotations} == builtin.annotations
    assert [t.name for t in listed][: len(BUILTINS)] == [f"acme_{name}" for name in BUILTINS]
    assert called.is_error is False
    assert called.structured_content == BUILTINS["collections_list"](acme, _caller(acme, "writer"), {})


def _caller(tenant, username):
    return caller_for(tenant, access_user(username))
