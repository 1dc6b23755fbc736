import pytest

from apps_runtime.manifest import DeployRejected, validate_manifest
from tests.apps_runtime.manifest.builders import (
    DELETE,
    FILES,
    edited,
    pointers_of,
    problems_of,
    valid_manifest,
)

ROUTE = "/routes/GET ~1cases~1search"
GET_ROUTE = "/routes/GET ~1cases~1{case_id}"
COLLECTION = "/collections/cases"
TOOL = "/mcp/tools/0"
GET_TOOL = "/mcp/tools/1"
JOB = "/jobs/reindex"


def route(handler="server/search.py", auth="user", **extra):
    return {"handler": handler, "auth": auth, **extra}


def test_the_base_manifest_is_accepted_without_warnings():
    assert validate_manifest(valid_manifest(), FILES) == []


def test_a_minimal_manifest_needs_only_a_name_and_routes():
    assert validate_manifest({"name": "a", "routes": {}}, set()) == []


# Each case: edits to the valid manifest that must still deploy.
VALID = {
    "app name of one letter": [("/name", "a")],
    "app name of 40 characters": [("/name", "a" * 40)],
    "app name with digits and underscores": [("/name", "app_2_x")],
    "$schema link for editors": [("/$schema", "https://example.com/api/schema/manifest.json")],
    "no optional app keys": [
        ("/title", DELETE),
        ("/description", DELETE),
        ("/version", DELETE),
        ("/access", DELETE),
    ],
    "access public": [("/access", "public")],
    "access user": [("/access", "user")],
    "access internal": [("/access", "internal")],
    "root route": [("/routes/GET ~1", route())],
    "every literal character": [("/routes/DELETE ~1a.b~1~c_d-E9~1{p_1}", route())],
    "every method": [(f"/routes/{m} ~1m", route()) for m in ("GET", "POST", "PUT", "PATCH", "DELETE")],
    "literal and parameter at the same place": [("/routes/GET ~1cases~1recent", route())],
    "same path, another method": [("/routes/DELETE ~1cases~1{case_id}", route())],
    "parameters with other names under another method": [("/routes/PUT ~1cases~1{other}", route())],
    "timeoutMs at its minimum": [(f"{ROUTE}/timeoutMs", 100)],
    "timeoutMs at its maximum": [(f"{ROUTE}/timeoutMs", 30000)],
    "route description": [(f"{ROUTE}/description", "Search cases.")],
    "public route": [(f"{ROUTE}/auth", "public")],
    "no collections": [("/collections", DELETE)],
    "collection with defaulted read and write": [
        (f"{COLLECTION}/read", DELETE),
        (f"{COLLECTION}/write", DELETE),
    ],
    "collection writable by the public on purpose": [(f"{COLLECTION}/write", "public")],
    "collection schema in draft 7": [
        (f"{COLLECTION}/schema", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"})
    ],
    "collection description": [(f"{COLLECTION}/description", "Client cases.")],
    "no mcp": [("/mcp", DELETE)],
    "mcp without tools": [("/mcp", {})],
    "no tools": [("/mcp/tools", [])],
    "tool name starting with a digit": [(f"{TOOL}/name", "0_tool")],
    "tool name of 40 characters": [(f"{TOOL}/name", "t" * 40)],
    "tool description of 2000 characters": [(f"{TOOL}/description", "d" * 2000)],
    "tool without title": [(f"{TOOL}/title", DELETE)],
    "every annotation": [
        (
            f"{TOOL}/annotations",
            {
                "title": "Find",
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        )
    ],
    "path parameter with a richer schema": [
        (f"{GET_TOOL}/inputSchema/properties/case_id", {"type": "string", "pattern": "^[0-9a-z]+$"})
    ],
    "no jobs": [("/jobs", DELETE)],
    "job with a description": [(f"{JOB}/description", "Nightly.")],
    "confirm tool with four-eyes approvers and an approval ttl": [
        (f"{TOOL}/confirm", True),
        (f"{TOOL}/approvers", "role:auditor,case_manager"),
        (f"{TOOL}/approvalTtl", 3600),
    ],
}

VALID_SCHEDULES = [
    "* * * * *",
    "0 3 * * *",
    "*/15 8-18 * * mon-fri",
    "0 0 1,15 * *",
    "0-30/10 * * JAN-MAR 0,7",
    "59 23 31 12 7",
    "5,10-20/5 */2 1-31/2 * SUN",
    "  0   3 * *\t*  ",
]


@pytest.mark.parametrize("edits", list(VALID.values()), ids=list(VALID))
def test_valid_variations_deploy(edits):
    validate_manifest(edited(edits), FILES)


@pytest.mark.parametrize("schedule", VALID_SCHEDULES)
def test_valid_schedules_deploy(schedule):
    validate_manifest(edited([(f"{JOB}/schedule", schedule)]), FILES)


# Each case: edits to the valid manifest, and the exact pointers of the problems they cause.
INVALID = {
    # app name and root keys
    "app name in capitals": ([("/name", "Case_Portal")], ["/name"]),
    "app name starting with a digit": ([("/name", "1app")], ["/name"]),
    "app name with a dash": ([("/name", "case-portal")], ["/name"]),
    "app name of 41 characters": ([("/name", "a" * 41)], ["/name"]),
    "app name with a trailing newline": ([("/name", "case_portal\n")], ["/name"]),
    "app name missing": ([("/name", DELETE)], ["/name"]),
    "app name not a string": ([("/name", 5)], ["/name"]),
    "unknown root key": ([("/extra", 1)], ["/extra"]),
    "routes missing": ([("/routes", DELETE)], ["/routes"]),
    "routes not an object": ([("/routes", [])], ["/routes"]),
    "title not a string": ([("/title", 5)], ["/title"]),
    "version not a string": ([("/version", 1.0)], ["/version"]),
    "description not a string": ([("/description", None)], ["/description"]),
    # auth expressions
    "access unknown word": ([("/access", "everyone")], ["/access"]),
    "access with a space": ([("/access", "role:a, b")], ["/access"]),
    "access with a duplicate role": ([("/access", "role:a,a")], ["/access"]),
    "access with no role": ([("/access", "role:")], ["/access"]),
    "access with a bad role name": ([("/access", "role:Admin")], ["/access"]),
    "access not a string": ([("/access", ["user"])], ["/access"]),
    # route keys
    "method in lowercase": ([("/routes/get ~1x", route())], ["/routes/get ~1x"]),
    "unknown method": ([("/routes/FETCH ~1x", route())], ["/routes/FETCH ~1x"]),
    "path without a slash": ([("/routes/GET x", route())], ["/routes/GET x"]),
    "two spaces": ([("/routes/GET  ~1x", route())], ["/routes/GET  ~1x"]),
    "no path": ([("/routes/GET", route())], ["/routes/GET"]),
    "trailing slash": ([("/routes/GET ~1x~1", route())], ["/routes/GET ~1x~1"]),
    "empty segment": ([("/routes/GET ~1x~1~1y", route())], ["/routes/GET ~1x~1~1y"]),
    "dot-dot segment": ([("/routes/GET ~1x~1..~1y", route())], ["/routes/GET ~1x~1..~1y"]),
    "space in a segment": ([("/routes/GET ~1x y", route())], ["/routes/GET ~1x y"]),
    "parameter name in capitals": ([("/routes/GET ~1x~1{Id}", route())], ["/routes/GET ~1x~1{Id}"]),
    "parameter inside a segment": ([("/routes/GET ~1file{id}", route())], ["/routes/GET ~1file{id}"]),
    "empty parameter": ([("/routes/GET ~1x~1{}", route())], ["/routes/GET ~1x~1{}"]),
    "duplicate parameter": ([("/routes/GET ~1x~1{id}~1{id}", route())], ["/routes/GET ~1x~1{id}~1{id}"]),
    "routes differing only by parameter names": (
        [("/routes/GET ~1cases~1{other_id}", route())],
        ["/routes/GET ~1cases~1{other_id}"],
    ),
    # route entries
    "route not an object": ([("/routes/GET ~1x", "server/search.py")], ["/routes/GET ~1x"]),
    "handler missing": ([(f"{ROUTE}/handler", DELETE)], [f"{ROUTE}/handler"]),
    "handler escaping the bundle": ([(f"{ROUTE}/handler", "../server/search.py")], [f"{ROUTE}/handler"]),
    "handler hidden escape": ([(f"{ROUTE}/handler", "server/../../x.py")], [f"{ROUTE}/handler"]),
    "handler absolute": ([(f"{ROUTE}/handler", "/server/search.py")], [f"{ROUTE}/handler"]),
    "handler with a drive letter": ([(f"{ROUTE}/handler", "C:/server/search.py")], [f"{ROUTE}/handler"]),
    "handler with backslashes": ([(f"{ROUTE}/handler", "server\\search.py")], [f"{ROUTE}/handler"]),
    "handler with a dot segment": ([(f"{ROUTE}/handler", "server/./search.py")], [f"{ROUTE}/handler"]),
    "handler with an empty segment": ([(f"{ROUTE}/handler", "server//search.py")], [f"{ROUTE}/handler"]),
    "handler not a .py file": ([(f"{ROUTE}/handler", "app.json")], [f"{ROUTE}/handler"]),
    "handler not in the bundle": ([(f"{ROUTE}/handler", "server/missing.py")], [f"{ROUTE}/handler"]),
    "handler not a string": ([(f"{ROUTE}/handler", 5)], [f"{ROUTE}/handler"]),
    "auth missing": ([(f"{ROUTE}/auth", DELETE)], [f"{ROUTE}/auth"]),
    "auth unknown word": ([(f"{ROUTE}/auth", "members")], [f"{ROUTE}/auth"]),
    "auth with an empty role": ([(f"{ROUTE}/auth", "role:a,,b")], [f"{ROUTE}/auth"]),
    "timeoutMs below 100": ([(f"{ROUTE}/timeoutMs", 99)], [f"{ROUTE}/timeoutMs"]),
    "timeoutMs above 30000": ([(f"{ROUTE}/timeoutMs", 30001)], [f"{ROUTE}/timeoutMs"]),
    "timeoutMs a string": ([(f"{ROUTE}/timeoutMs", "5000")], [f"{ROUTE}/timeoutMs"]),
    "timeoutMs a fraction": ([(f"{ROUTE}/timeoutMs", 150.5)], [f"{ROUTE}/timeoutMs"]),
    "timeoutMs a boolean": ([(f"{ROUTE}/timeoutMs", True)], [f"{ROUTE}/timeoutMs"]),
    "misspelt route key": (
        [(f"{ROUTE}/hanlder", "server/search.py"), (f"{ROUTE}/handler", DELETE)],
        [f"{ROUTE}/handler", f"{ROUTE}/hanlder"],
    ),
    # collections
    "collection name in capitals": (
        [("/collections/Cases", {"schema": {"type": "object"}})],
        ["/collections/Cases"],
    ),
    "collection name too long": (
        [("/collections/" + "c" * 41, {"schema": {"type": "object"}})],
        ["/collections/" + "c" * 41],
    ),
    "collection not an object": ([(COLLECTION, [])], [COLLECTION]),
    "collection schema missing": ([(f"{COLLECTION}/schema", DELETE)], [f"{COLLECTION}/schema"]),
    "collection schema not an object": ([(f"{COLLECTION}/schema", True)], [f"{COLLECTION}/schema"]),
    "collection schema with an array root": (
        [(f"{COLLECTION}/schema", {"type": "array"})],
        [f"{COLLECTION}/schema/type"],
    ),
    "collection schema without a type": (
        [(f"{COLLECTION}/schema", {"properties": {}})],
        [f"{COLLECTION}/schema/type"],
    ),
    "collection schema with a bad type": (
        [(f"{COLLECTION}/schema/properties/client_name/type", "strin")],
        [f"{COLLECTION}/schema/properties/client_name/type"],
    ),
    "collection schema with a bad regex": (
        [(f"{COLLECTION}/schema/properties/client_name/pattern", "[")],
        [f"{COLLECTION}/schema/properties/client_name/pattern"],
    ),
    "collection schema with an unknown $schema": (
        [(f"{COLLECTION}/schema/$schema", "https://example.com/not-a-draft")],
        [f"{COLLECTION}/schema/$schema"],
    ),
    "collection read invalid": ([(f"{COLLECTION}/read", "everyone")], [f"{COLLECTION}/read"]),
    "collection write invalid": ([(f"{COLLECTION}/write", "role:")], [f"{COLLECTION}/write"]),
    "collection unknown key": ([(f"{COLLECTION}/wrte", "user")], [f"{COLLECTION}/wrte"]),
    # tools
    "mcp unknown key": ([("/mcp/widgets", [])], ["/mcp/widgets"]),
    "tools not an array": ([("/mcp/tools", {})], ["/mcp/tools"]),
    "tool not an object": ([("/mcp/tools/2", "find_case")], ["/mcp/tools/2"]),
    "tool name with a dash and capitals": ([(f"{TOOL}/name", "Find-Case")], [f"{TOOL}/name"]),
    "tool name with a dot": ([(f"{TOOL}/name", "find.case")], [f"{TOOL}/name"]),
    "tool name empty": ([(f"{TOOL}/name", "")], [f"{TOOL}/name"]),
    "tool name of 41 characters": ([(f"{TOOL}/name", "t" * 41)], [f"{TOOL}/name"]),
    "tool name missing": ([(f"{TOOL}/name", DELETE)], [f"{TOOL}/name"]),
    "tool names not unique": ([(f"{GET_TOOL}/name", "find_case")], [f"{GET_TOOL}/name"]),
    "tool description missing": ([(f"{TOOL}/description", DELETE)], [f"{TOOL}/description"]),
    "tool description empty": ([(f"{TOOL}/description", "")], [f"{TOOL}/description"]),
    "tool description of 2001 characters": ([(f"{TOOL}/description", "d" * 2001)], [f"{TOOL}/description"]),
    "tool description not a string": ([(f"{TOOL}/description", ["Find"])], [f"{TOOL}/description"]),
    "tool title not a string": ([(f"{TOOL}/title", 5)], [f"{TOOL}/title"]),
    "tool unknown key": ([(f"{TOOL}/input_schema", {})], [f"{TOOL}/input_schema"]),
    "tool route missing": ([(f"{TOOL}/route", DELETE)], [f"{TOOL}/route"]),
    "tool route unknown": ([(f"{TOOL}/route", "GET /cases/find")], [f"{TOOL}/route"]),
    "tool route internal": ([(f"{TOOL}/route", "POST /jobs/reindex")], [f"{TOOL}/route"]),
    "tool path parameter not a property": (
        [(f"{GET_TOOL}/inputSchema/properties", {})],
        [f"{GET_TOOL}/inputSchema/properties/case_id"],
    ),
    "tool path parameter not required": (
        [(f"{GET_TOOL}/inputSchema/required", [])],
        [f"{GET_TOOL}/inputSchema/required"],
    ),
    "tool path parameter neither a property nor required": (
        [(f"{GET_TOOL}/inputSchema", {"type": "object"})],
        [f"{GET_TOOL}/inputSchema/properties/case_id", f"{GET_TOOL}/inputSchema/required"],
    ),
    "tool inputSchema missing": ([(f"{TOOL}/inputSchema", DELETE)], [f"{TOOL}/inputSchema"]),
    "tool inputSchema a boolean schema": ([(f"{TOOL}/inputSchema", True)], [f"{TOOL}/inputSchema"]),
    "tool inputSchema with an array root": (
        [(f"{TOOL}/inputSchema", {"type": "array", "items": {"type": "string"}})],
        [f"{TOOL}/inputSchema/type"],
    ),
    "tool inputSchema with a nullable root": (
        [(f"{TOOL}/inputSchema/type", ["object", "null"])],
        [f"{TOOL}/inputSchema/type"],
    ),
    "tool inputSchema without a type": ([(f"{TOOL}/inputSchema/type", DELETE)], [f"{TOOL}/inputSchema/type"]),
    "tool inputSchema not valid": (
        [(f"{TOOL}/inputSchema/properties/query/minLength", -1)],
        [f"{TOOL}/inputSchema/properties/query/minLength"],
    ),
    "tool inputSchema required not a list": (
        [(f"{TOOL}/inputSchema/required", "query")],
        [f"{TOOL}/inputSchema/required"],
    ),
    "tool outputSchema with an array root": (
        [(f"{GET_TOOL}/outputSchema", {"type": "array"})],
        [f"{GET_TOOL}/outputSchema/type"],
    ),
    "tool outputSchema not valid": (
        [(f"{GET_TOOL}/outputSchema/properties/client_name/type", 7)],
        [f"{GET_TOOL}/outputSchema/properties/client_name/type"],
    ),
    "annotations unknown hint": ([(f"{TOOL}/annotations/readOnly", True)], [f"{TOOL}/annotations/readOnly"]),
    "annotation hint not a boolean": (
        [(f"{TOOL}/annotations/readOnlyHint", "yes")],
        [f"{TOOL}/annotations/readOnlyHint"],
    ),
    "annotation title not a string": ([(f"{TOOL}/annotations/title", 1)], [f"{TOOL}/annotations/title"]),
    "annotations not an object": ([(f"{TOOL}/annotations", [])], [f"{TOOL}/annotations"]),
    "confirm not a boolean": ([(f"{TOOL}/confirm", "yes")], [f"{TOOL}/confirm"]),
    "approvers not an auth expression": (
        [(f"{TOOL}/confirm", True), (f"{TOOL}/approvers", "role:Boss")],
        [f"{TOOL}/approvers"],
    ),
    "approvers without confirm": ([(f"{TOOL}/approvers", "role:auditor")], [f"{TOOL}/approvers"]),
    "approvalTtl too short": (
        [(f"{TOOL}/confirm", True), (f"{TOOL}/approvalTtl", 5)],
        [f"{TOOL}/approvalTtl"],
    ),
    "approvalTtl without confirm": ([(f"{TOOL}/approvalTtl", 600)], [f"{TOOL}/approvalTtl"]),
    # jobs
    "jobs not an object": ([("/jobs", [])], ["/jobs"]),
    "job name in capitals": (
        [("/jobs/Reindex", {"route": "POST /jobs/reindex", "schedule": "0 3 * * *", "runAs": "role:a"})],
        ["/jobs/Reindex"],
    ),
    "job not an object": ([(JOB, "POST /jobs/reindex")], [JOB]),
    "job route missing": ([(f"{JOB}/route", DELETE)], [f"{JOB}/route"]),
    "job route unknown": ([(f"{JOB}/route", "POST /jobs/other")], [f"{JOB}/route"]),
    "job route not internal": ([(f"{JOB}/route", "GET /cases/search")], [f"{JOB}/route"]),
    "job schedule missing": ([(f"{JOB}/schedule", DELETE)], [f"{JOB}/schedule"]),
    "job schedule not a string": ([(f"{JOB}/schedule", 3)], [f"{JOB}/schedule"]),
    "job runAs missing": ([(f"{JOB}/runAs", DELETE)], [f"{JOB}/runAs"]),
    "job runAs user": ([(f"{JOB}/runAs", "user")], [f"{JOB}/runAs"]),
    "job runAs internal": ([(f"{JOB}/runAs", "internal")], [f"{JOB}/runAs"]),
    "job runAs with no role": ([(f"{JOB}/runAs", "role:")], [f"{JOB}/runAs"]),
    "job unknown key": ([(f"{JOB}/every", "day")], [f"{JOB}/every"]),
}


@pytest.mark.parametrize(("edits", "expected"), list(INVALID.values()), ids=list(INVALID))
def test_each_broken_rule_is_reported_at_its_pointer(edits, expected):
    assert pointers_of(edited(edits)) == sorted(expected)


INVALID_SCHEDULES = [
    "",
    "0 3 * *",
    "0 3 * * * *",
    "@daily",
    "60 * * * *",
    "* 24 * * *",
    "* * 0 * *",
    "* * 32 * *",
    "* * * 0 *",
    "* * * 13 *",
    "* * * * 8",
    "5-1 * * * *",
    "*/0 * * * *",
    "*/61 * * * *",
    "1/5 * * * *",
    "*-5 * * * *",
    "* * * foo *",
    "* * * * mon-xyz",
    "* * * * monday",
    "1,,2 * * * *",
    "-1 * * * *",
    "? * * * *",
    "\u0663 * * * *",
]


@pytest.mark.parametrize("schedule", INVALID_SCHEDULES)
def test_invalid_schedules_are_reported_at_the_schedule(schedule):
    assert pointers_of(edited([(f"{JOB}/schedule", schedule)])) == [f"{JOB}/schedule"]


def test_a_manifest_that_is_not_an_object_is_reported_at_the_root():
    problems = problems_of(["not", "an", "object"])
    assert [problem.pointer for problem in problems] == ["/"]
    assert str(problems[0]) == "/: must be an object, not an array"


def test_every_problem_is_reported_at_once():
    manifest = edited(
        [
            ("/name", "Case Portal"),
            ("/access", "anyone"),
            ("/unknown", True),
            (f"{ROUTE}/handler", "../escape.py"),
            (f"{GET_ROUTE}/timeoutMs", 1),
            ("/routes/get ~1x", route()),
            (f"{COLLECTION}/schema/type", "array"),
            (f"{TOOL}/name", "Find-Case"),
            (f"{TOOL}/description", "d" * 2001),
            (f"{GET_TOOL}/inputSchema/required", []),
            (f"{JOB}/schedule", "0 25 * * *"),
            (f"{JOB}/runAs", "user"),
        ]
    )
    assert pointers_of(manifest) == sorted(
        [
            "/name",
            "/access",
            "/unknown",
            f"{ROUTE}/handler",
            f"{GET_ROUTE}/timeoutMs",
            "/routes/get ~1x",
            f"{COLLECTION}/schema/type",
            f"{TOOL}/name",
            f"{TOOL}/description",
            f"{GET_TOOL}/inputSchema/required",
            f"{JOB}/schedule",
            f"{JOB}/runAs",
        ]
    )


def test_problems_are_ordered_by_pointer():
    manifest = edited(
        [("/name", "X"), (f"{TOOL}/name", "X"), ("/mcp/tools/1/name", "Y"), (f"{JOB}/runAs", "user")]
    )
    pointers = [problem.pointer for problem in problems_of(manifest)]
    assert pointers == ["/jobs/reindex/runAs", "/mcp/tools/0/name", "/mcp/tools/1/name", "/name"]


def test_a_rule_broken_in_both_passes_is_reported_once_with_the_specific_message():
    problems = problems_of(edited([("/name", "Case-Portal")]))
    assert len(problems) == 1
    assert str(problems[0]) == (
        "/name: app name 'Case-Portal' must match ^[a-z][a-z0-9_]{0,39}$: use lowercase letters, digits "
        "and underscores, starting with a letter, at most 40 characters"
    )


def test_a_route_key_pointer_escapes_its_slashes():
    problems = problems_of(edited([(f"{ROUTE}/handler", "server/missing.py")]))
    assert [str(problem) for problem in problems] == [
        "/routes/GET ~1cases~1search/handler: handler file 'server/missing.py' is not in the bundle: "
        "add it or fix the path"
    ]


def test_a_tilde_in_a_route_key_is_escaped_in_the_pointer():
    assert pointers_of(edited([("/routes/GET ~1~0home~1", route())])) == ["/routes/GET ~1~0home~1"]


def test_messages_say_what_to_change():
    messages = {
        problem.pointer: problem.message
        for problem in problems_of(
            edited(
                [
                    (f"{TOOL}/name", "Find-Case"),
                    (f"{ROUTE}/hanlder", "x"),
                    (f"{GET_ROUTE}/timeoutMs", 5),
                    ("/routes/get ~1x", route()),
                    (f"{TOOL}/route", "POST /jobs/reindex"),
                    (f"{GET_TOOL}/inputSchema/required", []),
                ]
            )
        )
    }
    assert messages[f"{TOOL}/name"] == (
        "tool name 'Find-Case' must match ^[a-z0-9_]{1,40}$: use lowercase letters, digits and underscores"
    )
    assert "did you mean 'handler'?" in messages[f"{ROUTE}/hanlder"]
    assert messages[f"{GET_ROUTE}/timeoutMs"] == "5 is out of range: use a value from 100 to 3600000"
    assert "write 'GET'" in messages["/routes/get ~1x"]
    assert "internal" in messages[f"{TOOL}/route"]
    assert "add 'case_id'" in messages[f"{GET_TOOL}/inputSchema/required"]


def test_missing_required_keys_point_at_the_missing_key():
    problems = problems_of(edited([(f"{ROUTE}/handler", DELETE), (f"{ROUTE}/auth", DELETE)]))
    assert [(p.pointer, p.message.split(":")[0]) for p in problems] == [
        (f"{ROUTE}/auth", "missing required key 'auth'"),
        (f"{ROUTE}/handler", "missing required key 'handler'"),
    ]


def test_semantic_checks_still_run_when_the_structure_is_broken():
    manifest = edited(
        [("/extra", 1), ("/collections", "nope"), (f"{TOOL}/name", "Bad Name"), ("/mcp/tools/2", 7)]
    )
    assert pointers_of(manifest) == ["/collections", "/extra", "/mcp/tools/0/name", "/mcp/tools/2"]


def test_a_tool_on_a_route_whose_key_is_invalid_is_not_reported_twice():
    manifest = edited([("/routes/get ~1x", route()), (f"{TOOL}/route", "get /x")])
    assert pointers_of(manifest) == ["/routes/get ~1x"]


def test_files_may_be_any_collection_of_paths():
    validate_manifest(valid_manifest(), list(FILES))
    validate_manifest(valid_manifest(), dict.fromkeys(FILES, b""))


def test_deploy_rejected_carries_the_warnings_too():
    manifest = edited([("/name", "Bad"), (f"{TOOL}/annotations", DELETE)])
    with pytest.raises(DeployRejected) as info:
        validate_manifest(manifest, FILES)
    assert [w.pointer for w in info.value.warnings] == [f"{TOOL}/annotations"]
