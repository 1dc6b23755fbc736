"""Outbound requests made by the platform for a handler (docs/egress.md), through the front-end path:
egress rules, checked addresses, redirects, secrets, budgets, the audit rows. Only loopback traffic:
a fake API on 127.0.0.1 (the one network EGRESS_ALLOWED_NETWORKS names) and a listener on 127.0.0.2
that no request may reach.
"""

from __future__ import annotations

import json

import pytest

from apps_runtime.egress import transport
from apps_runtime.egress.secrets import set_secret
from apps_runtime.models import HandlerError, OutboundRequest
from tests.support.fake_services import ConnectionCounter, start_fake_service

pytestmark = pytest.mark.django_db

BASE = "/t/acme/apps/hooks"
SECRET_VALUE = "s3cr3t-value-never-shown"

CALL = """
from platform_sdk import EgressRefused

def handle(request):
    b = request.body
    headers = dict(b.get("headers") or {})
    if b.get("secret"):
        headers["X-Api-Key"] = request.secret(b["secret"])
    url = b["url"].replace("SECRET", request.secret(b["secret"])) if b.get("secret") else b["url"]
    try:
        r = request.http.request(b.get("method", "GET"), url, headers=headers, json=b.get("json"),
                                 connection=b.get("connection"), timeout=b.get("timeout"))
    except EgressRefused as e:
        return {"refused": e.rule, "retryable": e.retryable}
    return {"status": r["status"], "json": r["json"], "text": r["text"], "headers": r["headers"]}
"""

UNCAUGHT = """
def handle(request):
    return request.http.get(request.body["url"])
"""


def manifest(egress: list[str], secrets: list[str] = ()) -> dict:
    return {
        "name": "hooks",
        "egress": egress,
        "secrets": list(secrets),
        "routes": {
            "POST /call": {"handler": "server/call.py", "auth": "user"},
            "POST /uncaught": {"handler": "server/uncaught.py", "auth": "user"},
        },
    }


FILES = {"server/call.py": CALL, "server/uncaught.py": UNCAUGHT}


@pytest.fixture
def api():
    service = start_fake_service("127.0.0.1")
    yield service
    service.close()


@pytest.fixture
def forbidden():
    counter = ConnectionCounter("127.0.0.2")
    yield counter
    counter.close()


@pytest.fixture(autouse=True)
def _networks(settings):
    settings.EGRESS_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    yield
    transport.set_resolver(None)


@pytest.fixture
def app(acme, deploy, api, forbidden):
    deploy(
        acme,
        manifest(
            [api.base, f"http://127.0.0.2:{forbidden.port}", "http://fake.test:" + str(api.port)],
            ["API_KEY", "UNSET_KEY"],
        ),
        FILES,
    )
    return acme


@pytest.fixture
def call(client, app, make_token):
    _, raw = make_token(app, "member")

    def run(route: str = "call", **body) -> tuple[int, dict]:
        response = client.post(
            f"{BASE}/{route}",
            data=json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )
        return response.status_code, response.json()

    return run


def test_an_allowed_request_is_made_by_the_platform_and_its_answer_returned(call, api):
    status, body = call(url=f"{api.base}/items?q=1", method="POST", json={"a": 1})
    assert status == 200
    assert body["status"] == 200
    assert body["json"]["method"] == "POST" and body["json"]["path"] == "/items?q=1"
    assert json.loads(body["json"]["body"]) == {"a": 1}
    assert len(api.seen) == 1
    row = OutboundRequest.all_tenants.get()
    assert (row.method, row.host, row.port, row.path, row.status, row.outcome) == (
        "POST",
        "127.0.0.1",
        api.port,
        "/items",
        200,
        "ok",
    )
    assert row.bytes_sent == len(b'{"a":1}') and row.bytes_received > 0


def test_a_destination_outside_egress_is_refused_with_the_fix_and_never_reached(call, api):
    status, body = call(url="https://example.org/")
    assert status == 200
    assert body["retryable"] is False
    assert 'add "example.org" to "egress" in app.json' in body["refused"]
    other_port = api.port + 1 if api.port < 65535 else api.port - 1
    _, body = call(url=f"http://127.0.0.1:{other_port}/")
    assert f'"http://127.0.0.1:{other_port}"' in body["refused"]
    rows = OutboundRequest.all_tenants.order_by("id")
    assert [r.outcome for r in rows] == ["refused", "refused"]
    assert rows[0].host == "example.org" and "egress" in rows[0].refusal


def test_an_uncaught_refusal_answers_403_with_the_rule(call):
    status, body = call("uncaught", url="https://example.org/")
    assert status == 403
    assert "example.org" in body["error"]
    assert not HandlerError.all_tenants.exists()


def test_a_loopback_address_outside_the_allowed_networks_is_never_connected(call, forbidden):
    status, body = call(url=f"http://127.0.0.2:{forbidden.port}/")
    assert "a loopback address (127.0.0.2)" in body["refused"]
    assert "EGRESS_ALLOWED_NETWORKS" in body["refused"]
    assert body["retryable"] is False
    assert forbidden.accepted == 0


def test_a_redirect_to_a_refused_address_is_not_followed(call, api, forbidden):
    target = f"http://127.0.0.2:{forbidden.port}/metadata"
    _, body = call(url=f"{api.base}/redirect?to={target}")
    assert "127.0.0.2" in body["refused"]
    assert forbidden.accepted == 0
    rows = list(OutboundRequest.all_tenants.order_by("id"))
    assert [(r.host, r.status, r.outcome) for r in rows] == [
        ("127.0.0.1", 302, "ok"),
        ("127.0.0.2", None, "refused"),
    ]


def test_a_redirect_outside_egress_is_not_followed(call, api):
    _, body = call(url=f"{api.base}/redirect?to=https://example.org/")
    assert "is not in this app's egress" in body["refused"]


def test_an_allowed_redirect_is_followed_and_checked_again(call, api):
    _, body = call(url=f"{api.base}/redirect?to=/landed")
    assert body["status"] == 200 and body["json"]["path"] == "/landed"
    assert [s.path for s in api.seen] == ["/redirect?to=/landed", "/landed"]


def test_dns_is_resolved_once_and_the_checked_address_is_the_one_connected(call, api, forbidden):
    answers = []

    def rebinding(host: str, port: int) -> list[str]:
        # First answer: the allowed fake API; every later one: the forbidden address.
        answers.append(host)
        return ["127.0.0.1"] if len(answers) == 1 else ["127.0.0.2"]

    transport.set_resolver(rebinding)
    _, body = call(url=f"http://fake.test:{api.port}/hello")
    assert body["status"] == 200 and body["json"]["path"] == "/hello"
    assert answers == ["fake.test"]  # one lookup for one request: nothing left to rebind
    assert api.seen[-1].headers["host"] == f"fake.test:{api.port}"
    _, body = call(url=f"http://fake.test:{api.port}/again")
    assert "127.0.0.2" in body["refused"]
    assert forbidden.accepted == 0


def test_a_mixed_dns_answer_is_refused_whichever_address_comes_first(call, api, forbidden):
    transport.set_resolver(lambda host, port: ["127.0.0.1", "169.254.169.254"])
    _, body = call(url=f"http://fake.test:{api.port}/")
    assert "cloud metadata" in body["refused"]
    assert api.seen == []


def test_a_secret_is_put_in_place_by_the_host_and_never_shown(call, api, app, caplog):
    set_secret(app, "API_KEY", SECRET_VALUE)
    status, body = call(url=f"{api.base}/echo/SECRET", secret="API_KEY")
    assert status == 200
    seen = api.seen[-1]
    assert seen.headers["x-api-key"] == SECRET_VALUE
    assert seen.path == f"/echo/{SECRET_VALUE}"
    # The fake API echoes the secret back: the handler gets it scrubbed, everywhere.
    assert SECRET_VALUE not in json.dumps(body)
    assert body["json"]["headers"]["x-api-key"] == "[secret]"
    row = OutboundRequest.all_tenants.get()
    assert SECRET_VALUE not in json.dumps(
        {f.name: str(getattr(row, f.name)) for f in OutboundRequest._meta.fields}
    )
    assert row.path == "/echo/{{lcp.secret:API_KEY}}"
    assert SECRET_VALUE not in caplog.text


def test_a_secret_not_set_or_not_declared_is_refused(call, api):
    _, body = call(url=f"{api.base}/", secret="UNSET_KEY")
    assert body["refused"].startswith("secret UNSET_KEY is not set")
    assert "PUT /api/tenants/acme/secrets/UNSET_KEY" in body["refused"]
    _, body = call(url=f"{api.base}/", secret="OTHER_KEY")
    assert body["refused"] == 'secret OTHER_KEY is not declared: add it to "secrets" in app.json'
    assert api.seen == []


def test_a_secret_in_the_host_is_refused(call, api, app):
    set_secret(app, "API_KEY", SECRET_VALUE)
    _, body = call(url="http://SECRET.fake.test/", secret="API_KEY")
    assert body["refused"]


def test_a_response_over_the_cap_is_cut_off(call, api, settings):
    settings.EGRESS_MAX_RESPONSE_BYTES = 1000
    _, body = call(url=f"{api.base}/big?bytes=5000")
    assert "over 1000 bytes" in body["refused"]
    _, body = call(url=f"{api.base}/big?bytes=900")
    assert body["status"] == 200 and len(body["text"]) == 900


def test_requests_per_call_are_bounded(client, acme, deploy, api, make_token, settings):
    settings.EGRESS_MAX_REQUESTS_PER_CALL = 3
    loop = """
from platform_sdk import EgressRefused

def handle(request):
    done = 0
    try:
        for _ in range(10):
            request.http.get(request.body["url"])
            done += 1
    except EgressRefused as e:
        return {"done": done, "refused": e.rule}
"""
    deploy(
        acme,
        {
            "name": "hooks",
            "egress": [api.base],
            "routes": {"POST /loop": {"handler": "l.py", "auth": "user"}},
        },
        {"l.py": loop},
    )
    _, raw = make_token(acme, "member")
    response = client.post(
        f"{BASE}/loop",
        data={"url": api.base},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.json() == {"done": 3, "refused": "more than 3 outbound requests in one call"}


def test_a_hanging_upstream_times_out_within_the_call(call, api):
    _, body = call(url=f"{api.base}/hang", timeout=0.5)
    assert body["retryable"] is True
    assert "did not answer in time" in body["refused"]


def test_a_handler_that_prints_and_raises_what_it_got_leaves_no_secret_in_the_error_record(
    client, acme, deploy, api, make_token
):
    leaky = """
import sys

def handle(request):
    answer = request.http.get(request.body["url"], headers={"X-Api-Key": request.secret("API_KEY")})
    print(answer, file=sys.stderr)
    raise RuntimeError("upstream said " + answer["text"] + " for " + request.secret("API_KEY"))
"""
    manifest = {
        "name": "hooks",
        "egress": [api.base],
        "secrets": ["API_KEY"],
        "routes": {"POST /leak": {"handler": "leak.py", "auth": "user"}},
    }
    deploy(acme, manifest, {"leak.py": leaky})
    set_secret(acme, "API_KEY", SECRET_VALUE)
    _, raw = make_token(acme, "member")
    response = client.post(
        f"{BASE}/leak",
        data={"url": f"{api.base}/echo"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 500
    assert api.seen[-1].headers["x-api-key"] == SECRET_VALUE  # it was sent
    error = HandlerError.all_tenants.get()
    assert "[secret]" in error.logs and "{{lcp.secret:API_KEY}}" in error.trace
    assert SECRET_VALUE not in error.trace + error.logs + response.content.decode()


def test_a_request_ends_within_the_routes_time_limit_and_the_handler_still_answers(
    client, acme, deploy, api, make_token
):
    manifest = {
        "name": "hooks",
        "egress": [api.base],
        "routes": {"POST /call": {"handler": "call.py", "auth": "user", "timeoutMs": 1500}},
    }
    deploy(acme, manifest, {"call.py": CALL})
    _, raw = make_token(acme, "member")
    response = client.post(
        f"{BASE}/call",
        data={"url": f"{api.base}/hang"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 200  # not the route's 504: the request gave up first
    assert response.json()["retryable"] is True


def test_a_dns_lookup_that_hangs_ends_with_the_connect_timeout(call, api, settings):
    import threading

    settings.EGRESS_CONNECT_TIMEOUT = 0.3
    released = threading.Event()

    def hanging(host: str, port: int) -> list[str]:
        released.wait(10)
        return ["127.0.0.1"]

    transport.set_resolver(hanging)
    try:
        _, body = call(url=f"http://fake.test:{api.port}/")
    finally:
        released.set()
    assert body == {"refused": "fake.test does not resolve", "retryable": True}
    assert api.seen == []


def test_a_secret_never_follows_a_redirect_to_another_host(call, api, app):
    # fake.test is in egress too, and resolves to the same fake API: only the host name differs.
    set_secret(app, "API_KEY", SECRET_VALUE)
    transport.set_resolver(lambda host, port: ["127.0.0.1"])
    target = f"http://fake.test:{api.port}/landed"
    _, body = call(url=f"{api.base}/redirect?to={target}", secret="API_KEY")
    assert body["status"] == 200 and body["json"]["path"] == "/landed"
    assert api.seen[0].headers["x-api-key"] == SECRET_VALUE
    assert "x-api-key" not in api.seen[-1].headers
    assert SECRET_VALUE.encode() not in api.seen[-1].body


def test_a_secret_in_the_body_is_not_sent_on_to_another_host_by_a_307(call, api, app):
    set_secret(app, "API_KEY", SECRET_VALUE)
    transport.set_resolver(lambda host, port: ["127.0.0.1"])
    target = f"http://fake.test:{api.port}/landed"
    _, body = call(
        url=f"{api.base}/redirect?status=307&to={target}",
        method="POST",
        json={"key": "{{lcp.secret:API_KEY}}"},
        secret="API_KEY",
    )
    assert "another host" in body["refused"]
    assert len(api.seen) == 1 and SECRET_VALUE in api.seen[0].body.decode()


def test_a_secret_in_the_url_stays_on_its_host_after_a_same_host_redirect(call, api, app):
    set_secret(app, "API_KEY", SECRET_VALUE)
    _, body = call(url=f"{api.base}/redirect?to=/landed", secret="API_KEY")
    assert body["json"]["path"] == "/landed"
    assert api.seen[-1].headers["x-api-key"] == SECRET_VALUE  # same host: its secrets go on


def test_an_answer_trickled_slowly_ends_within_the_routes_time_limit(client, acme, deploy, make_token):
    # Each header line comes well within the read timeout, so only a deadline over the whole
    # exchange ends it: without one, the request held the call (and its tenant's share) for as
    # long as the upstream kept trickling.
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def trickle() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            for _ in range(100):  # 20 s at most, so the test fails rather than hangs without the deadline
                if stop.wait(0.2):
                    return
                try:
                    conn.sendall(b"X-Slow: a\r\n")
                except OSError:
                    return

    threading.Thread(target=trickle, daemon=True).start()
    port = listener.getsockname()[1]
    manifest = {
        "name": "hooks",
        "egress": [f"http://127.0.0.1:{port}"],
        "routes": {"POST /call": {"handler": "call.py", "auth": "user", "timeoutMs": 1500}},
    }
    deploy(acme, manifest, {"call.py": CALL})
    _, raw = make_token(acme, "member")
    try:
        response = client.post(
            f"{BASE}/call",
            data={"url": f"http://127.0.0.1:{port}/"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )
    finally:
        stop.set()
        listener.close()
    assert response.status_code == 200  # not the route's 504: the request gave up first
    assert response.json()["retryable"] is True
