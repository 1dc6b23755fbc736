"""Data calls: the handler's records API goes to the broker over the protocol, acting as the caller."""

import pytest

from apps_runtime.sandbox import BrokerError


class FakeBroker:
    """Records the calls and answers from a tiny in-memory collection."""

    def __init__(self, fail: dict[str, BrokerError] | None = None):
        self.calls: list[tuple[str, dict]] = []
        self.fail = fail or {}
        self.records = {"1": {"id": "1", "title": "Leak"}}

    def __call__(self, op: str, args: dict):
        self.calls.append((op, args))
        if op in self.fail:
            raise self.fail[op]
        if op == "records.get":
            return self.records[args["id"]]
        if op == "records.create":
            record = {"id": str(len(self.records) + 1), **args["data"]}
            self.records[record["id"]] = record
            return record
        if op == "records.query":
            return {"items": list(self.records.values()), "next_cursor": None}
        if op == "records.update":
            self.records[args["id"]].update(args["data"])
            return self.records[args["id"]]
        if op == "records.delete":
            return self.records.pop(args["id"]) and None
        if op == "jobs.enqueue":
            return "run_42"
        raise AssertionError(op)


def test_records_calls_round_trip_through_the_broker(run_handler):
    broker = FakeBroker()

    outcome = run_handler(
        """
        def handle(request):
            got = request.records.get("cases", "1")
            made = request.records.create("cases", {"title": "Fire"})
            changed = request.records.update("cases", made["id"], {"state": "open"})
            page = request.records.query("cases", where={"state": "open"}, order_by="-id", limit=10)
            request.records.delete("cases", "1")
            return {"got": got, "made": made, "changed": changed, "page": page}
    """,
        broker=broker,
    )

    assert outcome.body == {
        "got": {"id": "1", "title": "Leak"},
        "made": {"id": "2", "title": "Fire"},
        "changed": {"id": "2", "title": "Fire", "state": "open"},
        "page": {
            "items": [{"id": "1", "title": "Leak"}, {"id": "2", "title": "Fire", "state": "open"}],
            "next_cursor": None,
        },
    }
    assert broker.calls == [
        ("records.get", {"collection": "cases", "id": "1"}),
        ("records.create", {"collection": "cases", "data": {"title": "Fire"}}),
        ("records.update", {"collection": "cases", "id": "2", "data": {"state": "open"}}),
        (
            "records.query",
            {
                "collection": "cases",
                "where": {"state": "open"},
                "order_by": "-id",
                "limit": 10,
                "cursor": None,
            },
        ),
        ("records.delete", {"collection": "cases", "id": "1"}),
    ]


def test_query_sends_its_defaults(run_handler):
    broker = FakeBroker()

    run_handler(
        """
        def handle(request):
            return request.records.query("cases")
    """,
        broker=broker,
    )

    assert broker.calls == [
        (
            "records.query",
            {"collection": "cases", "where": None, "order_by": None, "limit": 50, "cursor": None},
        )
    ]


def test_enqueue_sends_a_jobs_call_and_returns_the_run_id(run_handler):
    broker = FakeBroker()

    outcome = run_handler(
        """
        def handle(request):
            return {"run": request.enqueue("cases.reindex", {"all": True})}
    """,
        broker=broker,
    )

    assert outcome.body == {"run": "run_42"}
    assert broker.calls == [("jobs.enqueue", {"route": "cases.reindex", "body": {"all": True}})]


@pytest.mark.parametrize(
    ("op", "code", "status"),
    [
        ("records.get", "not_found", 404),
        ("records.get", "permission_denied", 404),  # not readable looks like missing
        ("records.query", "permission_denied", 404),
        ("records.create", "permission_denied", 403),
        ("records.update", "permission_denied", 403),
        ("records.delete", "permission_denied", 403),
        ("records.create", "invalid", 400),
        ("records.create", "limit", 429),
        ("jobs.enqueue", "permission_denied", 403),
    ],
)
def test_uncaught_broker_error_answers_with_its_status(run_handler, op, code, status):
    broker = FakeBroker(fail={op: BrokerError(code, f"{code} says the broker")})

    outcome = run_handler(
        """
        def handle(request):
            request.records.get("cases", "1")
            request.records.query("cases")
            request.records.create("cases", {"title": "x"})
            request.records.update("cases", "1", {"title": "y"})
            request.records.delete("cases", "1")
            request.enqueue("cases.reindex", {})
            return "unreachable"
    """,
        broker=broker,
    )

    assert (outcome.status, outcome.body) == (status, {"error": f"{code} says the broker"})


@pytest.mark.parametrize(
    ("code", "exception"),
    [
        ("not_found", "NotFound"),
        ("permission_denied", "PermissionDenied"),
        ("invalid", "ValidationFailed"),
        ("limit", "LimitExceeded"),
    ],
)
def test_broker_error_caught_by_the_handler_lets_it_continue(run_handler, code, exception):
    broker = FakeBroker(fail={"records.get": BrokerError(code, "nope")})

    outcome = run_handler(
        f"""
        import platform_sdk
        from platform_sdk import {exception}

        def handle(request):
            try:
                request.records.get("cases", "9")
            except {exception} as exc:
                caught = [exc.code, exc.message, isinstance(exc, platform_sdk.RecordsError)]
            return {{"caught": caught, "then": request.records.query("cases")["items"][0]["id"]}}
    """,
        broker=broker,
    )

    assert outcome.body == {"caught": [code, "nope", True], "then": "1"}


def test_data_calls_beyond_the_limit_raise_inside_the_handler(run_handler):
    broker = FakeBroker()

    outcome = run_handler(
        """
        from platform_sdk import LimitExceeded

        def handle(request):
            done = 0
            try:
                while True:
                    request.records.get("cases", "1")
                    done += 1
            except LimitExceeded as exc:
                return {"done": done, "code": exc.code}
    """,
        broker=broker,
        max_data_calls=5,
    )

    assert outcome.body == {"done": 5, "code": "limit"}
    assert len(broker.calls) == 5


def test_data_call_limit_left_uncaught_answers_429(run_handler):
    outcome = run_handler(
        """
        def handle(request):
            for _ in range(10):
                request.records.get("cases", "1")
    """,
        broker=FakeBroker(),
        max_data_calls=3,
    )

    assert outcome.status == 429


def test_non_json_data_call_arguments_raise_inside_the_handler(run_handler):
    outcome = run_handler("""
        def handle(request):
            try:
                request.records.create("cases", {"tags": {"a"}})
            except TypeError:
                return "refused"
    """)

    assert outcome.body == "refused"


def test_broker_bug_propagates_to_the_platform_and_the_sandbox_stays_usable(run_handler):
    def broken_broker(op, args):
        raise KeyError("platform bug")

    with pytest.raises(KeyError):
        run_handler(
            """
            def handle(request):
                return request.records.get("cases", "1")
        """,
            broker=broken_broker,
        )

    assert run_handler("def handle(request):\n    return 'ok'\n").body == "ok"


def test_broker_error_rejects_unknown_codes():
    with pytest.raises(ValueError):
        BrokerError("teapot", "no")
