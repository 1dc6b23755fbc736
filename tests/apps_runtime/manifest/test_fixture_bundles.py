"""Every example bundle in fixtures/apps reads, validates cleanly, and its handlers keep the contract."""

import importlib.util
import io
import json
import sys
import zipfile
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from apps_runtime.manifest import MANIFEST_SCHEMA, read_bundle, read_bundle_bytes
from apps_runtime.manifest.handlers import check_bundle
from apps_runtime.sandbox.runtime import sdk

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "apps"
BUNDLES = sorted(path for path in FIXTURES.iterdir() if (path / "app.json").is_file())


def test_there_are_example_bundles():
    assert {path.name for path in BUNDLES} >= {"case_portal", "helpdesk"}


@pytest.mark.parametrize("path", BUNDLES, ids=lambda path: path.name)
def test_each_bundle_validates_with_no_problems_and_no_warnings(path):
    bundle = read_bundle(path)
    assert check_bundle(bundle) == []  # the manifest and the handlers' code
    assert list(Draft202012Validator(MANIFEST_SCHEMA).iter_errors(bundle.manifest)) == []


@pytest.mark.parametrize("path", BUNDLES, ids=lambda path: path.name)
def test_each_bundle_reads_the_same_zipped(path):
    folder = read_bundle(path)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in folder.files.items():
            archive.writestr(f"{path.name}/{name}", data)
    assert read_bundle_bytes(buffer.getvalue()) == folder


def test_case_portal_keeps_the_design_example():
    manifest = json.loads((FIXTURES / "case_portal" / "app.json").read_text())
    assert manifest["access"] == "role:case_reader,case_writer"
    assert list(manifest["routes"]) == [
        "GET /cases/search",
        "GET /cases/{case_id}",
        "GET /cases/complete",
        "POST /cases/{case_id}/escalate",
        "POST /jobs/reindex",
    ]
    assert manifest["routes"]["POST /cases/{case_id}/escalate"]["timeoutMs"] == 5000
    find_case = manifest["mcp"]["tools"][0]
    assert find_case == {
        "name": "find_case",
        "title": "Find a case",
        "description": "Find cases by client name or reference. Use it before opening a new case.",
        "route": "GET /cases/search",
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 2}},
            "required": ["query"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False},
    }
    assert manifest["jobs"] == {
        "reindex": {"route": "POST /jobs/reindex", "schedule": "0 3 * * *", "runAs": "role:case_writer"}
    }


# The handlers, run against the real SDK with an in-memory records store.


class Store:
    """A stand-in for the platform's side of the data calls: equality filters and cursor pages."""

    def __init__(self, records: dict[str, dict[str, dict]] | None = None):
        self.records = records or {}
        self.calls: list[tuple[str, dict]] = []

    def __call__(self, op: str, args: dict):
        self.calls.append((op, args))
        rows = self.records.setdefault(args["collection"], {})
        if op == "records.query":
            where = args["where"] or {}
            items = [
                {"id": key, "data": data}
                for key, data in rows.items()
                if all(data.get(field) == value for field, value in where.items())
            ]
            start = int(args["cursor"] or 0)
            end = start + args["limit"]
            return {"items": items[start:end], "next_cursor": str(end) if end < len(items) else None}
        if op == "records.create":
            key = f"r{len(rows) + 1}"
            rows[key] = dict(args["data"])
            return {"id": key, "data": rows[key]}
        if args["id"] not in rows:
            raise sdk.records_error("not_found", "no such record", op)
        if op == "records.get":
            return {"id": args["id"], "data": rows[args["id"]]}
        if op == "records.update":
            rows[args["id"]] = {**rows[args["id"]], **args["data"]}
            return {"id": args["id"], "data": rows[args["id"]]}
        raise AssertionError(op)


@pytest.fixture
def run(monkeypatch):
    monkeypatch.setitem(sys.modules, "platform_sdk", sdk)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # keep the fixture folders clean

    def run(app: str, route: str, store: Store, **request):
        bundle = read_bundle(FIXTURES / app)
        handler_path = FIXTURES / app / bundle.manifest["routes"][route]["handler"]
        spec = importlib.util.spec_from_file_location(f"fixture_handler_{app}", handler_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        method, path = route.split(" ", 1)
        return module.handle(sdk.Request({"method": method, "path": path, **request}, store))

    return run


def cases(count: int = 3) -> Store:
    names = ["Acme Ltd", "Globex", "ACME Holdings"] + [f"Client {i}" for i in range(count - 3)]
    return Store(
        {
            "cases": {
                f"c{i}": {"client_name": name, "reference": f"REF-{i}", "status": "open"}
                for i, name in enumerate(names[:count])
            }
        }
    )


def test_find_case_matches_client_names_case_insensitively(run):
    result = run("case_portal", "GET /cases/search", cases(), query={"query": "acme"})
    assert [item["id"] for item in result] == ["c0", "c2"]
    assert result[0]["client_name"] == "Acme Ltd"


def test_find_case_matches_references_and_reads_every_page(run):
    store = cases(250)
    result = run("case_portal", "GET /cases/search", store, query={"query": "ref-249"})
    assert [item["id"] for item in result] == ["c249"]
    assert [op for op, _ in store.calls] == ["records.query"] * 3


def test_find_case_refuses_a_too_short_query(run):
    assert run("case_portal", "GET /cases/search", cases(), query={"query": "a"})[1] == 400


def test_get_case_returns_the_case_data(run):
    result = run("case_portal", "GET /cases/{case_id}", cases(), params={"case_id": "c1"})
    assert result == {"client_name": "Globex", "reference": "REF-1", "status": "open"}


def test_get_case_answers_404_for_a_missing_case(run):
    result = run("case_portal", "GET /cases/{case_id}", cases(), params={"case_id": "nope"})
    assert result == ({"error": "case not found"}, 404)


def test_escalate_case_merges_the_escalation_into_the_case(run):
    store = cases()
    result = run(
        "case_portal",
        "POST /cases/{case_id}/escalate",
        store,
        params={"case_id": "c1"},
        body={"case_id": "c1", "reason": "client called twice"},
    )
    expected = {
        "client_name": "Globex",
        "reference": "REF-1",
        "status": "open",
        "escalated": True,
        "reason": "client called twice",
    }
    assert result == expected
    assert store.records["cases"]["c1"] == expected


def test_escalate_case_answers_404_for_a_missing_case(run):
    result = run("case_portal", "POST /cases/{case_id}/escalate", cases(), params={"case_id": "x"}, body={})
    assert result == ({"error": "case not found"}, 404)


def test_reindex_counts_every_case(run):
    assert run("case_portal", "POST /jobs/reindex", cases(120)) == {"reindexed": 120}


def test_list_tickets_returns_open_tickets(run):
    store = Store(
        {
            "tickets": {
                "t1": {"title": "Printer", "status": "open"},
                "t2": {"title": "VPN", "status": "closed"},
                "t3": {"title": "Email", "status": "open"},
            }
        }
    )
    result = run("helpdesk", "GET /tickets", store, query={"limit": 10})
    assert result == [
        {"id": "t1", "title": "Printer", "status": "open"},
        {"id": "t3", "title": "Email", "status": "open"},
    ]
    assert store.calls[0][1]["where"] == {"status": "open"}


def test_list_tickets_refuses_a_limit_that_is_not_a_number(run):
    assert run("helpdesk", "GET /tickets", Store(), query={"limit": "lots"})[1] == 400


def test_open_ticket_creates_an_open_ticket_reported_by_the_caller(run):
    store = Store()
    result = run(
        "helpdesk",
        "POST /tickets",
        store,
        body={"title": "  Printer on fire ", "body": "3rd floor"},
        user={"username": "ann", "roles": [], "superuser": False},
    )
    assert result == (
        {"id": "r1", "title": "Printer on fire", "body": "3rd floor", "status": "open", "reporter": "ann"},
        201,
    )


def test_open_ticket_refuses_a_short_title(run):
    with pytest.raises(sdk.UserError):
        run("helpdesk", "POST /tickets", Store(), body={"title": "x"})
