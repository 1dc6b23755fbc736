"""The handler contract (docs/handlers.md): what a handler receives and what its return values become."""

import pytest

from apps_runtime.sandbox import HandlerFailed


def test_trivial_handler_answers_200_with_its_json(run_handler):
    outcome = run_handler("""
        def handle(request):
            return {"hello": "world", "n": [1, 2.5, None, True]}
    """)

    assert outcome.status == 200
    assert outcome.body == {"hello": "world", "n": [1, 2.5, None, True]}
    assert outcome.duration_ms > 0


def test_returning_a_value_and_a_status_answers_with_that_status(run_handler):
    outcome = run_handler("""
        def handle(request):
            return {"error": "no such case"}, 404
    """)

    assert (outcome.status, outcome.body) == (404, {"error": "no such case"})


def test_request_fields_reach_the_handler(run_handler):
    request = {
        "method": "POST",
        "path": "/cases/7",
        "body": {"title": "Leak", "tags": ["a"]},
        "query": {"page": "2"},
        "params": {"id": "7"},
        "tool": {"name": "helpdesk_cases_update", "arguments": {"title": "Leak"}},
        "user": {"username": "ana", "roles": ["agent"], "superuser": False},
    }

    outcome = run_handler(
        """
        def handle(request):
            return {name: getattr(request, name)
                    for name in ("method", "path", "body", "query", "params", "tool", "user")}
    """,
        request,
    )

    assert outcome.body == request


def test_missing_request_fields_get_empty_defaults(run_handler):
    outcome = run_handler(
        """
        def handle(request):
            return [request.body, request.query, request.params, request.tool, request.user]
    """,
        {"method": "GET", "path": "/"},
    )

    assert outcome.body == [{}, {}, {}, None, None]


def test_handler_imports_sibling_modules_of_its_bundle(run_handler):
    outcome = run_handler(
        """
        from lib.pricing import total

        def handle(request):
            return {"total": total([1, 2, 3])}
    """,
        files={"lib/pricing.py": "def total(xs):\n    return sum(xs)\n"},
    )

    assert outcome.body == {"total": 6}


def test_user_error_answers_with_its_status_and_message(run_handler):
    outcome = run_handler("""
        from platform_sdk import UserError

        def handle(request):
            raise UserError("title is required", status=422)
    """)

    assert (outcome.status, outcome.body) == (422, {"error": "title is required"})


def test_user_error_defaults_to_400(run_handler):
    outcome = run_handler("""
        from platform_sdk import UserError

        def handle(request):
            raise UserError("bad input")
    """)

    assert (outcome.status, outcome.body) == (400, {"error": "bad input"})


def test_exception_fails_with_a_trace_of_only_the_tenants_files(run_handler, bundle_dir):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(
            """
            from lib import maths

            def handle(request):
                return maths.ratio(1, 0)
        """,
            files={"lib/maths.py": "def ratio(a, b):\n    return a / b\n"},
        )

    exc = failed.value
    assert exc.kind == "handler_error"
    assert 'File "server/handler.py", line 5, in handle' in exc.trace
    assert 'File "lib/maths.py", line 2, in ratio' in exc.trace
    assert "ZeroDivisionError" in exc.trace
    assert str(bundle_dir) not in exc.trace
    assert "apps_runtime" not in exc.trace and "child.py" not in exc.trace


def test_failure_message_is_generic_with_the_error_id(run_handler, bundle_dir):
    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            def handle(request):
                raise RuntimeError("secret detail " + __file__)
        """)

    exc = failed.value
    assert exc.error_id.startswith("err_") and len(exc.error_id) == 30
    assert exc.error_id in str(exc)
    assert "secret detail" not in str(exc) and str(bundle_dir) not in str(exc)


def test_exception_message_paths_are_made_bundle_relative(run_handler, bundle_dir):
    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            def handle(request):
                open(__file__.replace("handler.py", "missing.json"))
        """)

    assert "server/missing.json" in failed.value.trace
    assert str(bundle_dir) not in failed.value.trace


def test_syntax_error_fails_with_a_trace_pointing_at_the_tenants_file(run_handler, bundle_dir):
    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            def handle(request)
                return 1
        """)

    assert failed.value.kind == "handler_error"
    assert 'File "server/handler.py", line 2' in failed.value.trace
    assert "SyntaxError" in failed.value.trace
    assert str(bundle_dir) not in failed.value.trace


def test_missing_handle_function_fails(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            def handler(request):
                return 1
        """)

    assert failed.value.kind == "handler_error"
    assert "server/handler.py" in failed.value.trace
    assert "handle(request)" in failed.value.trace


def test_handler_file_outside_the_bundle_fails(sandbox, bundle_dir):
    from apps_runtime.sandbox import Invocation, SandboxLimits

    from .bundles import refuse_data_calls, write_bundle

    write_bundle(bundle_dir.parent, {"elsewhere.py": "def handle(request):\n    return 1\n"})

    with pytest.raises(HandlerFailed) as failed:
        sandbox.run(Invocation(str(bundle_dir), "../elsewhere.py", {}, SandboxLimits()), refuse_data_calls)

    assert failed.value.kind == "handler_error"
    assert "not found" in failed.value.trace


def test_non_serialisable_result_fails(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            def handle(request):
                return {"tags": {"a", "b"}}
        """)

    assert failed.value.kind == "handler_error"
    assert "set" in failed.value.trace


@pytest.mark.parametrize("returned", ["({}, 99)", "({}, 600)", "({}, '404')", "(1, 2, 3)"])
def test_invalid_status_fails(run_handler, returned):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(f"""
            def handle(request):
                return {returned}
        """)

    assert failed.value.kind == "handler_error"


def test_sys_exit_in_a_handler_is_a_handler_error(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            import sys

            def handle(request):
                sys.exit(0)
        """)

    assert failed.value.kind == "handler_error"


def test_failure_is_logged_with_the_full_detail_under_its_error_id(run_handler, bundle_dir, caplog):
    caplog.set_level("WARNING", logger="apps_runtime.sandbox")

    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            def handle(request):
                raise KeyError("missing-key")
        """)

    (record,) = [r for r in caplog.records if r.name == "apps_runtime.sandbox"]
    message = record.getMessage()
    assert record.error_id == failed.value.error_id
    assert failed.value.error_id in message and "handler_error" in message
    assert f"{bundle_dir}/server/handler.py" in message  # the platform's log keeps the real paths
