"""The deploy validator on ``mcp.resources`` and ``mcp.prompts``: every problem at its pointer."""

import pytest

from apps_runtime.manifest import validate_manifest
from apps_runtime.manifest.resources import FILE_MAX_BYTES
from tests.apps_runtime.manifest.builders import edited, problems_of, valid_manifest

FILES = {
    "app.json": b"{}",
    "server/search.py": b"",
    "server/get.py": b"",
    "server/jobs/reindex.py": b"",
    "docs/handbook.md": b"# Handbook\n",
    "docs/logo.png": b"\x89PNG\r\n\x1a\n",
    "docs/big.txt": b"x" * (FILE_MAX_BYTES + 1),
}
HANDBOOK = {"name": "handbook", "description": "How we answer.", "file": "docs/handbook.md"}
CASE = {"name": "case", "description": "One case.", "route": "GET /cases/{case_id}"}
RECORD = {"name": "case_record", "description": "One case record.", "collection": "cases"}
PROMPT = {
    "name": "draft_reply",
    "description": "Draft a reply.",
    "arguments": [
        {"name": "case_id", "required": True, "complete": "GET /cases/search"},
        {"name": "tone", "enum": ["formal", "friendly"]},
    ],
    "messages": [
        {"role": "user", "text": "Draft a {tone} reply about {case_id}."},
        {"role": "user", "resource": "handbook"},
        {"role": "assistant", "image": "docs/logo.png"},
    ],
}


def with_items(resources=(), prompts=(), **edits) -> dict:
    manifest = valid_manifest()
    manifest["mcp"]["resources"] = [dict(r) for r in resources]
    manifest["mcp"]["prompts"] = [dict(p) for p in prompts]
    return edited(list(edits.items()), manifest) if edits else manifest


def problems(manifest) -> list[tuple[str, str]]:
    return [(p.pointer, p.message) for p in problems_of(manifest, FILES)]


def test_resources_and_prompts_of_every_kind_are_accepted():
    manifest = with_items(
        [HANDBOOK, CASE, RECORD, {**CASE, "name": "case2", "uri": "by_id/{case_id}"}], [PROMPT]
    )
    assert validate_manifest(manifest, FILES) == []


@pytest.mark.parametrize(
    ("resource", "pointer", "message"),
    [
        (
            {**HANDBOOK, "route": "GET /cases/search"},
            "/mcp/resources/0",
            "exactly one of file, route or collection",
        ),
        ({"name": "x", "description": "d"}, "/mcp/resources/0", "exactly one of file, route or collection"),
        ({**HANDBOOK, "file": "docs/missing.md"}, "/mcp/resources/0/file", "is not in the bundle"),
        ({**HANDBOOK, "file": "docs/big.txt"}, "/mcp/resources/0/file", "over the limit of"),
        ({**HANDBOOK, "file": "server/get.py"}, "/mcp/resources/0/file", "the app's code or manifest"),
        ({**CASE, "route": "GET /nope"}, "/mcp/resources/0/route", "is not a route of this app"),
        ({**CASE, "route": "POST /jobs/reindex"}, "/mcp/resources/0/route", "is not a GET route"),
        ({**RECORD, "collection": "nope"}, "/mcp/resources/0/collection", "is not a collection of this app"),
        ({**CASE, "auth": "user"}, "/mcp/resources/0/auth", "auth is for file resources only"),
        ({**CASE, "uri": "cases/{id}"}, "/mcp/resources/0/uri", "exactly the path parameters"),
        ({**CASE, "uri": "cases"}, "/mcp/resources/0/uri", "exactly the path parameters"),
        ({**HANDBOOK, "uri": "docs/{x}"}, "/mcp/resources/0/uri", "a file is one resource"),
        ({**RECORD, "uri": "records/{a}/{b}"}, "/mcp/resources/0/uri", "exactly one variable"),
        ({**CASE, "uri": "a/../{case_id}"}, "/mcp/resources/0/uri", "'..' segment"),
        ({**CASE, "uri": "https://evil.example/{case_id}"}, "/mcp/resources/0/uri", "must match"),
        ({**CASE, "uri": "cases/x{case_id}"}, "/mcp/resources/0/uri", "must match"),
        ({**CASE, "variables": {"other": {}}}, "/mcp/resources/0/variables/other", "is not a variable"),
        (
            {**CASE, "variables": {"case_id": {"enum": ["a"], "complete": "GET /cases/search"}}},
            "/mcp/resources/0/variables/case_id",
            "enum or complete, not both",
        ),
        ({**HANDBOOK, "mimeType": "not a type"}, "/mcp/resources/0/mimeType", "must match"),
        ({**HANDBOOK, "name": "Bad-Name"}, "/mcp/resources/0/name", "must match"),
        ({**HANDBOOK, "description": ""}, "/mcp/resources/0/description", "must not be empty"),
    ],
)
def test_each_bad_resource_is_refused_at_its_pointer(resource, pointer, message):
    found = problems(with_items([resource]))
    assert any(p == pointer and message in m for p, m in found), found


def test_duplicate_names_uris_and_same_shaped_templates_are_refused():
    found = problems(
        with_items(
            [
                HANDBOOK,
                {**HANDBOOK, "uri": "other"},
                {**HANDBOOK, "name": "copy"},
                {**HANDBOOK, "name": "copy2", "uri": "handbook"},
                CASE,
                {**CASE, "name": "case_again", "uri": "case_record/{case_id}"},
                RECORD,
            ]
        )
    )
    assert (
        "/mcp/resources/1/name",
        "resource name 'handbook' is already used by /mcp/resources/0: "
        "resource names must be unique in the app",
    ) in found
    assert any(p == "/mcp/resources/3/uri" and "is already used by /mcp/resources/0" in m for p, m in found)
    assert any(p == "/mcp/resources/6/uri" and "matches the same URIs" in m for p, m in found)


@pytest.mark.parametrize(
    ("edit", "pointer", "message"),
    [
        (
            {"arguments": [{"name": "a"}, {"name": "a"}], "messages": [{"role": "user", "text": "{a}"}]},
            "/mcp/prompts/0/arguments/1/name",
            "already declared",
        ),
        (
            {"messages": [{"role": "user", "text": "About {case}"}]},
            "/mcp/prompts/0/messages/0/text",
            "placeholder {case} is not an argument",
        ),
        (
            {"messages": [{"role": "user", "text": "Unclosed {brace"}]},
            "/mcp/prompts/0/messages/0/text",
            "literal braces",
        ),
        (
            {"messages": [{"role": "user", "text": "{case_id.__class__}"}]},
            "/mcp/prompts/0/messages/0/text",
            "not a plain {argument} placeholder",
        ),
        (
            {"messages": [{"role": "user", "text": "a", "image": "docs/logo.png"}]},
            "/mcp/prompts/0/messages/0",
            "exactly one of text, resource or image",
        ),
        (
            {"messages": [{"role": "user", "resource": "nope"}]},
            "/mcp/prompts/0/messages/0/resource",
            "is not a file resource of this app",
        ),
        (
            {"messages": [{"role": "user", "image": "docs/handbook.md"}]},
            "/mcp/prompts/0/messages/0/image",
            "must be a image/png",
        ),
        (
            {"messages": [{"role": "user", "image": "docs/missing.png"}]},
            "/mcp/prompts/0/messages/0/image",
            "is not in the bundle",
        ),
        ({"messages": [{"role": "system", "text": "x"}]}, "/mcp/prompts/0/messages/0/role", "must be one of"),
        ({"route": "GET /cases/search"}, "/mcp/prompts/0", "exactly one of messages (a template) or route"),
        (
            {"arguments": [{"name": "case_id", "complete": "POST /jobs/reindex"}]},
            "/mcp/prompts/0/arguments/0/complete",
            "is not a GET route",
        ),
        (
            {"arguments": [{"name": "case_id", "enum": ["a"], "complete": "GET /cases/search"}]},
            "/mcp/prompts/0/arguments/0",
            "enum or complete, not both",
        ),
        ({"arguments": [{"name": "case-id"}]}, "/mcp/prompts/0/arguments/0/name", "must match"),
        (
            {"arguments": [{"description": "no name"}]},
            "/mcp/prompts/0/arguments/0/name",
            "missing required key",
        ),
    ],
)
def test_each_bad_prompt_is_refused_at_its_pointer(edit, pointer, message):
    prompt = {**PROMPT, **edit}
    found = problems(with_items([HANDBOOK], [prompt]))
    assert any(p == pointer and message in m for p, m in found), found


def test_a_route_prompt_takes_no_messages_or_auth_and_needs_a_get_route():
    route_prompt = {"name": "p", "description": "d", "route": "POST /jobs/reindex", "auth": "user"}
    found = problems(with_items([], [route_prompt, {**route_prompt, "name": "p"}]))
    pointers = {p for p, _ in found}
    assert {"/mcp/prompts/0/route", "/mcp/prompts/0/auth", "/mcp/prompts/1/name"} <= pointers


def test_every_problem_is_reported_at_once():
    bad_resource = {**HANDBOOK, "file": "docs/missing.md"}
    bad_prompt = {**PROMPT, "messages": [{"role": "user", "text": "{nope}"}]}
    pointers = {p for p, _ in problems(with_items([bad_resource], [bad_prompt], **{"/name": "Bad"}))}
    assert {"/name", "/mcp/resources/0/file", "/mcp/prompts/0/messages/0/text"} <= pointers


def test_an_app_named_like_a_well_known_scheme_serves_no_resources():
    found = problems(with_items([HANDBOOK], **{"/name": "https"}))
    assert any(p == "/mcp/resources" and "https://" in m for p, m in found), found
    assert (
        validate_manifest(
            with_items(
                [], [PROMPT | {"messages": [{"role": "user", "text": "{tone}"}]}], **{"/name": "https"}
            ),
            FILES,
        )
        == []
    )
