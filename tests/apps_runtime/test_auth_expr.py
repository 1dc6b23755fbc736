from dataclasses import dataclass, field

import pytest

from apps_runtime.auth_expr import AuthExpr, InvalidAuthExpression, parse_auth


@dataclass
class Caller:
    is_authenticated: bool = True
    is_member: bool = True
    is_superuser: bool = False
    roles: frozenset[str] = field(default_factory=frozenset)


ANONYMOUS = Caller(is_authenticated=False, is_member=False)
OUTSIDER = Caller(is_member=False)  # signed in, but not a member of this tenant
MEMBER = Caller()
READER = Caller(roles=frozenset({"case_reader"}))
WRITER = Caller(roles=frozenset({"case_writer", "other"}))
SUPERUSER = Caller(is_member=False, is_superuser=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("public", AuthExpr("public")),
        ("user", AuthExpr("user")),
        ("internal", AuthExpr("internal")),
        ("role:a", AuthExpr("role", frozenset({"a"}))),
        ("role:case_reader,case_writer", AuthExpr("role", frozenset({"case_reader", "case_writer"}))),
        ("role:" + "r" * 40, AuthExpr("role", frozenset({"r" * 40}))),
        ("role:a1_b", AuthExpr("role", frozenset({"a1_b"}))),
    ],
)
def test_valid_expressions_parse(text, expected):
    assert parse_auth(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Public",
        "users",
        "anyone",
        " user",
        "user ",
        "role:",
        "role",
        "roles:a",
        "role: a",
        "role:a, b",
        "role:a,",
        "role:,a",
        "role:a,,b",
        "role:A",
        "role:1a",
        "role:_a",
        "role:a-b",
        "role:" + "r" * 41,
        "role:a,a",
        "role:a\n",
        "internal\n",
    ],
)
def test_invalid_expressions_raise_with_the_expression_and_a_reason(text):
    with pytest.raises(InvalidAuthExpression) as info:
        parse_auth(text)
    assert info.value.expr == text
    assert info.value.reason
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("value", [None, 3, ["user"], {"role": "a"}])
def test_non_strings_are_invalid_expressions(value):
    with pytest.raises(InvalidAuthExpression):
        parse_auth(value)


def test_duplicate_roles_are_refused_with_a_reason_naming_the_role():
    with pytest.raises(InvalidAuthExpression) as info:
        parse_auth("role:a,b,a")
    assert "'a'" in info.value.reason


def test_parsing_is_cached():
    assert parse_auth("role:x,y") is parse_auth("role:x,y")


def test_an_expression_prints_in_canonical_form():
    assert str(parse_auth("role:b,a")) == "role:a,b"
    assert str(parse_auth("user")) == "user"


@pytest.mark.parametrize(
    ("caller", "allowed"),
    [(ANONYMOUS, True), (OUTSIDER, True), (MEMBER, True), (READER, True), (SUPERUSER, True)],
)
def test_public_allows_anyone_even_anonymous(caller, allowed):
    assert parse_auth("public").allows(caller) is allowed


@pytest.mark.parametrize(
    ("caller", "allowed"),
    [(ANONYMOUS, False), (OUTSIDER, False), (MEMBER, True), (READER, True), (SUPERUSER, True)],
)
def test_user_allows_members_and_superusers(caller, allowed):
    assert parse_auth("user").allows(caller) is allowed


@pytest.mark.parametrize(
    ("caller", "allowed"),
    [
        (ANONYMOUS, False),
        (OUTSIDER, False),
        (MEMBER, False),
        (READER, True),
        (WRITER, True),
        (Caller(roles=frozenset({"other"})), False),
        (Caller(is_member=False, roles=frozenset({"case_reader"})), False),
        (Caller(is_authenticated=False, roles=frozenset({"case_reader"})), False),
        (SUPERUSER, True),
    ],
)
def test_role_allows_members_holding_any_listed_role_and_superusers(caller, allowed):
    assert parse_auth("role:case_reader,case_writer").allows(caller) is allowed


@pytest.mark.parametrize("caller", [ANONYMOUS, OUTSIDER, MEMBER, READER, WRITER, SUPERUSER])
def test_internal_allows_no_outside_caller_not_even_a_superuser(caller):
    assert parse_auth("internal").allows(caller) is False
    assert parse_auth("internal").is_internal


def test_a_superuser_flag_without_authentication_gives_nothing_beyond_public():
    ghost = Caller(is_authenticated=False, is_member=True, is_superuser=True, roles=frozenset({"a"}))
    assert parse_auth("public").allows(ghost)
    assert not parse_auth("user").allows(ghost)
    assert not parse_auth("role:a").allows(ghost)


def test_roles_may_be_any_set_like_collection():
    caller = Caller(roles={"case_reader"})  # a plain set, not a frozenset
    assert parse_auth("role:case_reader").allows(caller)
