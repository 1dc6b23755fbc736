"""Every way a handler can fail answers with an error id, and the platform keeps serving."""

import pytest

pytestmark = pytest.mark.django_db

FAILURES = {
    "exception": ("raise ValueError('secret detail')", 500, "handler_error"),
    "loop": ("while True:\n        pass", 504, "handler_timeout"),
    "memory": ("blob = bytearray(2 * 1024 ** 3)\n    return {'n': len(blob)}", 500, "handler_resource_limit"),
    "exit": ("import os\n    os._exit(3)", 500, "handler_error"),
    "not_json": ("return {'a': {1, 2}}", 500, "handler_error"),
    "bad_status": ("return {}, 1234", 500, "handler_error"),
}
GARBAGE = (
    "import os\n"
    "    print('\\x00{\"status\": 200}garbage' * 1000)\n"
    "    os.write(1, b'\\xff\\xfe' * 500)\n"
    "    return {'ok': True}"
)


def _manifest() -> tuple[dict, dict]:
    routes, files = {}, {}
    for name, (body, _, _) in {
        **FAILURES,
        "garbage": (GARBAGE, 200, None),
        "ok": ("return {'ok': 1}", 200, None),
    }.items():
        routes[f"GET /{name}"] = {"handler": f"server/{name}.py", "auth": "public", "timeoutMs": 500}
        files[f"server/{name}.py"] = f"def handle(request):\n    {body}\n"
    return {"name": "fails", "routes": routes}, files


@pytest.fixture
def fails(make_tenant, deploy):
    tenant = make_tenant("acme")
    deploy(tenant, *_manifest())
    return tenant


@pytest.mark.parametrize("kind", sorted(FAILURES))
def test_a_failing_handler_gets_an_error_id_and_the_next_call_works(client, fails, kind):
    _, status, code = FAILURES[kind]
    response = client.get(f"/t/acme/apps/fails/{kind}")
    assert response.status_code == status
    body = response.json()
    assert body["code"] == code and body["errorId"].startswith("err_")
    assert "secret detail" not in response.content.decode() and "/work/" not in response.content.decode()
    assert client.get("/t/acme/apps/fails/ok").json() == {"ok": 1}


def test_garbage_on_stdout_does_not_corrupt_the_response(client, fails):
    response = client.get("/t/acme/apps/fails/garbage")
    assert response.status_code == 200 and response.json() == {"ok": True}
