"""Two kinds of hostile text sent to every listed tool, each on its own so one hole cannot hide others.

Lone surrogates (``"\\ud800"``, valid JSON, not valid UTF-8) and arguments nested far deeper than any
real tool needs, but shallow enough to get past the JSON parser. Every tool must answer them as the
caller's mistake (a tool error or invalid params), never as an internal error.
"""

from __future__ import annotations

import json

import pytest

from tests.fuzz.bar import assert_clean_answer, assert_still_serving
from tests.support import mcp_wire as wire

pytestmark = pytest.mark.slow

DEPTHS = [64, 200, 900, 2000]
DEEP_MARK = "deep_probe"


def _failures(served, who: str, bodies: list[tuple[str, bytes]]) -> list[str]:
    failed = []
    for name, body in bodies:
        headers = wire.modern_headers(served.tokens[who], {"method": "tools/call", "params": {"name": name}})
        try:
            assert_clean_answer(wire.post(served.mcp_url, body, headers), body)
        except AssertionError as err:
            failed.append(f"{name}: {str(err)[:700]}")
    assert_still_serving(served.platform, served.mcp_url, served.tokens["reader"])
    return failed


def _call_body(name: str, arguments_json: str) -> bytes:
    meta = json.dumps(wire.modern_meta())
    return (
        f'{{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        f'"params":{{"name":{json.dumps(name)},"arguments":{arguments_json},"_meta":{meta}}}}}'
    ).encode()


def _properties(schema: dict) -> list[str]:
    return sorted(schema.get("properties") or {}) or ["x"]


def test_a_lone_surrogate_in_any_argument_is_the_callers_mistake(served, tool_schemas):
    bodies = []
    for name, schema in sorted(tool_schemas.items()):
        every_property = {prop: "\ud800" for prop in _properties(schema)}
        bodies.append((name, _call_body(name, json.dumps(every_property))))
        bodies.append((name, _call_body(name, json.dumps({"\ud800": None}))))
    bodies.append(
        (
            "acme_records_create",
            _call_body(
                "acme_records_create",
                json.dumps({"app": "cases", "collection": "cases", "data": {"client_name": "\ud800"}}),
            ),
        )
    )
    failed = _failures(served, "root", bodies)
    assert not failed, "\n".join(failed)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def forget_deep_records(served):
    """Deep records left by a failing case would break every later query of the collection: drop them."""
    yield
    served.platform.python(
        "from apps_runtime.models import Record; "
        f"print(Record.all_tenants.filter(data__client_name={DEEP_MARK!r}).delete()[0])"
    )


def test_deeply_nested_arguments_are_the_callers_mistake(served, tool_schemas, forget_deep_records):
    bodies = []
    for depth in DEPTHS:
        nested = _nested(depth)
        for name, schema in sorted(tool_schemas.items()):
            every_property = "{" + ",".join(f"{json.dumps(p)}:{nested}" for p in _properties(schema)) + "}"
            bodies.append((name, _call_body(name, every_property)))
        data = f'{{"client_name":"{DEEP_MARK}","x":{nested}}}'
        bodies.append(
            (
                "acme_records_create",
                _call_body("acme_records_create", f'{{"app":"cases","collection":"cases","data":{data}}}'),
            )
        )
        bodies.append(
            ("acme_records_query", _call_body("acme_records_query", '{"app":"cases","collection":"cases"}'))
        )
    failed = _failures(served, "root", bodies)
    assert not failed, "\n".join(failed)
