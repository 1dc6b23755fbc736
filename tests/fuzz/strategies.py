"""Hypothesis strategies for hostile input: JSON of every shape, JSON-RPC messages, headers, arguments.

Text here never holds lone surrogates (Hypothesis leaves them out, and so does ``ODD_TEXT``):
``test_hostile_text`` sends those to every tool on its own, so one known hole cannot hide others.
"""

from __future__ import annotations

from hypothesis import strategies as st

from tests.support import mcp_wire as wire

HUGE_NUMBERS = [2**31, 2**53 + 1, 2**63, 2**64 + 1, -(2**63) - 1, 10**40, 10**400, 1e308, -1e308, 5e-324]
ODD_TEXT = [
    "",
    " ",
    "\x00",
    "\u0000\ufffd",
    "é" * 3,
    "../../etc/passwd",
    "file:///etc/passwd",
    "http://127.0.0.1:1/",
    "${jndi:x}",
    "'; DROP TABLE records; --",
    "%s%n",
    "a" * 5000,
    "null",
    "__proto__",
    "constructor",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(HUGE_NUMBERS),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(ODD_TEXT),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.text(max_size=12) | st.sampled_from(ODD_TEXT), inner, max_size=5)
    ),
    max_leaves=15,
)
json_objects = st.dictionaries(st.text(max_size=12), json_values, max_size=6)


def _nest(depth: int, opener: str, leaf: str) -> bytes:
    closer = "]" if opener == "[" else "}"
    return (opener * depth + leaf + closer * depth).encode()


# JSON text nested far deeper than any recursive parser or validator likes.
deeply_nested = st.builds(
    _nest,
    st.integers(min_value=50, max_value=20_000),
    st.sampled_from(["[", '{"a":']),
    st.sampled_from(["1", '"x"', "null"]),
)


KNOWN_METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "tasks/get",
    "tasks/list",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/tools/list_changed",
    "sampling/createMessage",
    "rpc.discover",
    "",
]
methods = st.sampled_from(KNOWN_METHODS) | st.text(max_size=40)
ids = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(HUGE_NUMBERS),
    st.text(max_size=20),
    st.sampled_from(["a" * 100_000, ""]),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    json_values,
)
cursors = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["", "=", "bzox", "bzotMQ==", "bzo5OTk5OTk5OTk5OTk5OTk5OTk5OTk=", "eDox", "AAAA", "%%%%"]
    ),
    json_values,
)
meta = st.one_of(st.just(wire.modern_meta()), json_values, st.just({}))
params = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.text(max_size=70) | st.sampled_from(["acme_records_query", "acme_cases_echo"]),
            "arguments": json_values,
            "cursor": cursors,
            "_meta": meta,
            "protocolVersion": st.text(max_size=12) | st.sampled_from([wire.LEGACY, wire.MODERN]),
            "capabilities": json_values,
            "clientInfo": json_values,
            "level": json_values,
            "uri": json_values,
        },
    ),
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", "2", 2.0, None]) | json_values,
        "id": ids,
        "method": methods,
        "params": params,
        "result": json_values,
        "error": json_values,
    },
)
batches = st.lists(messages, min_size=0, max_size=4)

_header_text = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60).map(
    str.strip
)
protocol_versions = (
    st.sampled_from(
        [None, "2024-11-05", "2025-03-26", "2025-06-18", wire.LEGACY, wire.MODERN, "2099-01-01", "", "latest"]
    )
    | _header_text
)
content_types = (
    st.sampled_from(
        [
            None,
            "application/json",
            "application/json; charset=utf-8",
            "application/json; charset=utf-16",
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json-patch+json",
        ]
    )
    | _header_text
)
accepts = st.sampled_from([None, wire.ACCEPT, "application/json", "text/event-stream", "*/*", "text/html"])
session_ids = st.sampled_from([None, "", "0", "a" * 300]) | _header_text


def authorizations(tokens: dict[str, str]) -> st.SearchStrategy[str | None]:
    """A good token, none, another scheme, or garbage that looks like a token."""
    return st.one_of(
        st.sampled_from([f"Bearer {token}" for token in tokens.values()]),
        st.sampled_from([None, "", "Bearer", "Basic YTpi", "bearer x", "Bearer lcp_", "Bearer lcp_x_y"]),
        _header_text.map(lambda text: f"Bearer {text}".strip()),
        st.sampled_from(list(tokens.values())).map(lambda t: f"Bearer {t[:-3]}xyz"),
    )


def arguments_for(schema: dict) -> st.SearchStrategy:
    """Arguments for a tool: its declared properties given values of every JSON shape, plus strays."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return json_values
    shaped = st.fixed_dictionaries({}, optional={name: json_values for name in properties})
    stray = st.dictionaries(st.text(max_size=10), json_values, max_size=2)
    return st.one_of(
        st.builds(lambda a, b: {**b, **a}, shaped, stray),
        shaped,
        json_values,
    )


# Keys a hostile caller tries in records_query's ``where`` and ``order_by``: lookups, relations, junk.
ODD_FIELDS = [
    "client_name",
    "status",
    "client_name__regex",
    "client_name__iregex",
    "client_name__contains",
    "data__client_name",
    "data",
    "id",
    "pk",
    "record_id",
    "tenant_id",
    "tenant__slug",
    "app__tenant__slug",
    "created_by",
    "__",
    "_",
    "?",
    "-",
    "--client_name",
    "-client_name",
    "client_name.length",
    "client name",
    "1abc",
    "a" * 300,
    "",
]
fields = st.sampled_from(ODD_FIELDS) | st.text(max_size=20)
where_clauses = st.one_of(
    st.dictionaries(fields, json_values, max_size=5),
    st.integers(min_value=21, max_value=3000).map(lambda n: {f"f{i}": i for i in range(n)}),
    json_values,
)
order_bys = fields | json_values
