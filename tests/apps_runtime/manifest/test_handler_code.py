"""Deploys compile every route's handler (never running it) and refuse broken code with file, line, column."""

from __future__ import annotations

import pytest

from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import DeployRejected, bundle_from_mapping
from apps_runtime.manifest.handlers import MAX_HANDLER_BYTES
from apps_runtime.models import App

pytestmark = pytest.mark.django_db

AT = "/routes/GET ~1cases~1search/handler"
PATH = "server/cases/search.py"
BODY = "    return {}\n"


def manifest(**routes: str) -> dict:
    return {
        "name": "cases",
        "routes": {
            key: {"handler": handler, "auth": "user"}
            for key, handler in ({"GET /cases/search": PATH} | routes).items()
        },
    }


def deploy(tenant, source: str | bytes, *, files: dict | None = None, **routes: str):
    bundle = bundle_from_mapping(manifest(**routes), {PATH: source, **(files or {})})
    return deploy_bundle(tenant, bundle, acting_user=None)


def refusal(tenant, source: str | bytes, **kwargs) -> list[str]:
    with pytest.raises(DeployRejected) as rejected:
        deploy(tenant, source, **kwargs)
    assert not App.objects.for_tenant(tenant).filter(active_version__isnull=False).exists()
    return [str(problem) for problem in rejected.value.problems]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def handle(request):\n    return {'a': 1\n", f"{PATH}:2:12: '{{' was never closed"),
        ("def handle(request):\n  x = 1\n    y = 2\n", f"{PATH}:3:4: unexpected indent"),
        ("def helper(request):\n" + BODY, f"{PATH}: defines no function handle(request): add one"),
        ("def handle():\n" + BODY, f"{PATH}:1:1: handle() takes no argument: define handle(request)"),
        ("def handle(request, extra):\n" + BODY, f"{PATH}:1:1: handle(request, extra) needs 2 arguments"),
        ("def handle(request, *, page):\n" + BODY, f"{PATH}:1:1: handle requires keyword argument(s) page"),
        ("async def handle(request):\n" + BODY, f"{PATH}:1:1: 'async def handle' returns a coroutine"),
        ("handle = lambda: {}\n", f"{PATH}:1:1: handle() takes no argument"),
        ("def f():\n    nonlocal x\n\ndef handle(request):\n" + BODY, f"{PATH}:2:5: no binding for nonlocal"),
    ],
    ids=[
        "syntax",
        "indent",
        "no-handle",
        "no-argument",
        "two-arguments",
        "keyword-only",
        "async",
        "lambda",
        "compile-stage",
    ],
)
def test_broken_handler_code_is_refused_at_the_routes_handler_with_file_line_and_column(
    make_tenant, source, message
):
    [problem] = refusal(make_tenant(), source)
    assert problem.startswith(f"{AT}: {message}")


def test_every_route_using_a_broken_file_and_every_manifest_problem_are_reported_together(make_tenant):
    bundle = bundle_from_mapping(
        {**manifest(**{"GET /cases/all": PATH}), "access": "nobody"}, {PATH: "def handle(:\n"}
    )
    with pytest.raises(DeployRejected) as rejected:
        deploy_bundle(make_tenant(), bundle, acting_user=None)
    pointers = [problem.pointer for problem in rejected.value.problems]
    assert pointers == ["/access", "/routes/GET ~1cases~1all/handler", AT]


@pytest.mark.parametrize(
    "source",
    [
        "def handle(request):\n    return {}\n",
        "def handle(request, page=1, *args, verbose=False, **kwargs):\n    return {}\n",
        "def handle(*args):\n    return {}\n",
        "import sys\nif sys.version_info >= (3,):\n    def handle(request):\n        return {}\n",
        "handle = lambda request: {}\n",
        "import functools\n\n@functools.lru_cache\ndef handle():\n    return {}\n",
    ],
    ids=["plain", "optional-extras", "varargs", "conditional", "lambda", "decorated"],
)
def test_handlers_callable_with_the_request_deploy_without_warnings(make_tenant, source):
    assert deploy(make_tenant(), source).warnings == []


def test_a_handle_bound_dynamically_deploys_with_a_warning_that_it_is_checked_only_when_it_runs(make_tenant):
    files = {"server/lib.py": "def handle(request):\n    return {}\n"}
    result = deploy(make_tenant(), "import os\nfrom server.lib import handle\n", files=files)
    [warning] = [str(w) for w in result.warnings]
    assert warning.startswith(f"{AT}: {PATH}:2:1: handle is not bound by a plain 'def handle(request)'")


def test_compiling_never_runs_the_handler(make_tenant, tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\ndef handle(request):\n    return {{}}\n"
    deploy(make_tenant(), source)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = " + "-" * 100_000 + "1\n", "nested too deeply to compile"),
        ("x = " + "+".join(["1"] * 100_000) + "\n", "nested too deeply to compile"),
        ("x = " + "(" * 500 + ")" * 500 + "\n", "too many nested parentheses"),
        ("x = 1\0\n", "null bytes"),
        (b"x = '\xff'\n", "can't decode byte 0xff"),
    ],
    ids=["unary-chain", "operator-chain", "parentheses", "null-byte", "not-utf8"],
)
def test_hostile_source_is_a_problem_not_a_crash(make_tenant, source, message):
    [problem] = refusal(make_tenant(), source)
    assert problem.startswith(f"{AT}: {PATH}") and message in problem


def test_a_handler_file_over_the_size_bound_is_refused_uncompiled(make_tenant):
    source = "def handle(request):\n    return {}\n" + "#" * MAX_HANDLER_BYTES
    [problem] = refusal(make_tenant(), source)
    assert problem.endswith("a handler file is at most 256 KiB: move code into modules it imports")


def test_a_syntax_warning_is_a_deploy_warning(make_tenant):
    result = deploy(make_tenant(), "def handle(request):\n    return {'ok': 1 is 1}\n")
    [warning] = [str(w) for w in result.warnings]
    assert warning.startswith(f"{AT}: {PATH}:2: ") and "is" in warning
