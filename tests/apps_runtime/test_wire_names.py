import hashlib
import re

import pytest

from apps_runtime.wire_names import BUILTIN_TOOLS, MIN_LIMIT, builtin_wire_name, fit_to_limit, wire_name

WIRE_CHARSET = re.compile(r"^[a-z0-9_]+$")


def _expected_hashed(full: str, limit: int) -> str:
    return full[: limit - 9] + "_" + hashlib.sha256(full.encode()).hexdigest()[:8]


def test_short_names_are_prefix_app_and_tool_joined_by_underscores():
    assert wire_name("acme", "case_portal", "find_case", limit=64) == "acme_case_portal_find_case"


@pytest.mark.parametrize("length", [5, 40, 63, 64])
def test_a_name_of_at_most_the_limit_stays_as_it_is(length):
    tool = "t" * (length - len("p_a_"))
    assert wire_name("p", "a", tool, limit=64) == f"p_a_{tool}"


def test_a_name_of_65_characters_is_hashed_to_exactly_64():
    tool = "x" * (65 - len("acme_app_"))
    full = f"acme_app_{tool}"
    assert len(full) == 65
    result = wire_name("acme", "app", tool, limit=64)
    assert len(result) == 64
    assert result == _expected_hashed(full, 64)
    assert result[:55] == full[:55]
    assert result[55] == "_"


@pytest.mark.parametrize("limit", [MIN_LIMIT, 16, 32, 48, 60, 64, 128])
@pytest.mark.parametrize("extra", [1, 2, 50, 300])
def test_hashed_names_are_exactly_the_limit_for_any_limit(limit, extra):
    tool = "y" * (limit + extra)
    result = wire_name("acme", "app", tool, limit=limit)
    assert len(result) == limit
    assert result == _expected_hashed(f"acme_app_{tool}", limit)


@pytest.mark.parametrize("limit", [32, 64])
def test_wire_names_are_deterministic(limit):
    args = ("tenant_with_a_long_prefix", "an_application_name", "a_tool_with_a_rather_long_name")
    assert wire_name(*args, limit=limit) == wire_name(*args, limit=limit)


def test_the_hash_covers_the_full_name_so_names_sharing_the_kept_start_differ():
    common = "c" * 60
    first = wire_name("acme", "app", common + "_alpha", limit=64)
    second = wire_name("acme", "app", common + "_omega", limit=64)
    assert first[:55] == second[:55]
    assert first != second


@pytest.mark.parametrize(
    ("prefix", "app", "tool", "limit"),
    [
        ("acme", "case_portal", "find_case", 64),
        ("a_b", "x" * 40, "y" * 40, 64),
        ("tenant_1", "app_2", "0_tool", 32),
        ("p", "a", "_" * 40, MIN_LIMIT),
    ],
)
def test_valid_inputs_give_only_lowercase_letters_digits_and_underscores(prefix, app, tool, limit):
    assert WIRE_CHARSET.fullmatch(wire_name(prefix, app, tool, limit=limit))


@pytest.mark.parametrize("builtin", BUILTIN_TOOLS)
def test_builtin_tools_are_prefix_and_builtin(builtin):
    assert builtin_wire_name("acme", builtin, limit=64) == f"acme_{builtin}"


def test_builtin_names_follow_the_same_hashing_rule():
    prefix = "p" * 60
    result = builtin_wire_name(prefix, "records_query", limit=64)
    assert result == _expected_hashed(f"{prefix}_records_query", 64)


def test_an_app_tool_can_take_the_wire_name_of_a_builtin():
    # Why the deploy checks wire names against built-ins: app "records" + tool "query".
    assert wire_name("acme", "records", "query", limit=64) == builtin_wire_name(
        "acme", "records_query", limit=64
    )


@pytest.mark.parametrize("limit", [0, 1, MIN_LIMIT - 1])
def test_a_limit_too_small_to_keep_any_of_the_name_is_refused(limit):
    with pytest.raises(ValueError):
        fit_to_limit("anything_long_enough_to_hash", limit=limit)


def test_builtin_tools_are_the_eight_documented_ones():
    assert BUILTIN_TOOLS == (
        "collections_list",
        "records_query",
        "records_get",
        "records_create",
        "records_update",
        "records_delete",
        "search_tools",
        "run_code",
    )


@pytest.mark.parametrize("limit", [64, 16])
def test_a_tenants_wire_name_follows_the_platform_limit(settings, limit):
    from types import SimpleNamespace

    from apps_runtime.wire_names import tenant_wire_name

    settings.MCP_WIRE_NAME_LIMIT = limit
    tenant = SimpleNamespace(mcp_prefix="acme")
    assert tenant_wire_name(tenant, "cases", "get_case") == wire_name(
        "acme", "cases", "get_case", limit=limit
    )
