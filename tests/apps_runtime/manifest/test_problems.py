import pytest

from apps_runtime.manifest.problems import DeployRejected, Problem, child, ordered, pointer, split_pointer


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        ((), "/"),
        (("name",), "/name"),
        (("routes", "GET /cases/search", "handler"), "/routes/GET ~1cases~1search/handler"),
        (("routes", "GET /~home"), "/routes/GET ~1~0home"),
        (("mcp", "tools", 0, "name"), "/mcp/tools/0/name"),
        (("a~1",), "/a~01"),
    ],
)
def test_pointers_escape_tilde_and_slash_per_rfc_6901(tokens, expected):
    assert pointer(*tokens) == expected
    assert split_pointer(expected) == [str(token) for token in tokens]


def test_the_root_is_a_single_slash_and_extends_like_any_pointer():
    assert pointer() == "/"
    assert child("/", "name") == "/name"
    assert child("/routes", "GET /a") == "/routes/GET ~1a"
    assert child("/name") == "/name"


def test_a_problem_prints_as_pointer_colon_message():
    assert str(Problem("/routes/GET ~1a/handler", "add it")) == "/routes/GET ~1a/handler: add it"
    assert str(Problem("/", "app.json is missing")) == "/: app.json is missing"


def test_ordering_drops_duplicates_and_sorts_indexes_as_numbers():
    problems = [
        Problem("/mcp/tools/10/name", "x"),
        Problem("/mcp/tools/2/name", "x"),
        Problem("/mcp/tools/2/name", "x"),
    ]
    assert [p.pointer for p in ordered(problems)] == ["/mcp/tools/2/name", "/mcp/tools/10/name"]


def test_deploy_rejected_lists_every_problem_in_its_message():
    error = DeployRejected([Problem("/name", "bad name"), Problem("/routes", "missing")])
    assert error.problems == [Problem("/name", "bad name"), Problem("/routes", "missing")]
    assert str(error) == "deploy rejected, 2 problems:\n/name: bad name\n/routes: missing"
    assert error.warnings == []


def test_deploy_rejected_needs_a_problem():
    with pytest.raises(ValueError):
        DeployRejected([])
