"""Fair shares of outbound requests, on the live server: while tenant A's upstream hangs, A holds only
its own share (EGRESS_MAX_CONCURRENT_PER_TENANT requests reach the upstream, the rest wait in A's own
calls) and tenant B's calls keep being answered. B's p50 before and during is printed (run with -s);
nothing here asserts a duration.
"""

from __future__ import annotations

import statistics
import threading
import time

import httpx2
import pytest

from tests.support.fake_services import start_fake_service, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CALL = """
def handle(request):
    return {"status": request.http.get(request.body["url"])["status"]}
"""


@pytest.fixture
def api():
    service = start_fake_service("127.0.0.1")
    yield service
    service.close()


def _app(deploy, tenant, api, name):
    manifest = {
        "name": name,
        "egress": [api.base],
        "routes": {"POST /call": {"handler": "call.py", "auth": "user", "timeoutMs": 20000}},
    }
    deploy(tenant, manifest, {"call.py": CALL})


def test_a_hanging_upstream_holds_only_its_own_tenants_share(
    live_url, api, make_tenant, make_member, make_token, deploy, settings
):
    settings.EGRESS_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.EGRESS_MAX_CONCURRENT_PER_TENANT = 2
    settings.EGRESS_READ_TIMEOUT = 20.0
    slow, fast = make_tenant("slowco"), make_tenant("fastco")
    for tenant in (slow, fast):
        make_member(tenant, "m")
    _app(deploy, slow, api, "hangs")
    _app(deploy, fast, api, "quick")
    slow_token, fast_token = make_token(slow, "m")[1], make_token(fast, "m")[1]
    http = httpx2.Client(base_url=live_url, timeout=30)

    def call(slug: str, app: str, token: str, path: str) -> httpx2.Response:
        return http.post(
            f"/t/{slug}/apps/{app}/call",
            json={"url": f"{api.base}{path}"},
            headers={"Authorization": f"Bearer {token}"},
        )

    def p50() -> float:
        times = []
        for _ in range(15):
            started = time.perf_counter()
            response = call("fastco", "quick", fast_token, "/ok")
            times.append(time.perf_counter() - started)
            assert response.json() == {"status": 200}
        return statistics.median(times)

    call("fastco", "quick", fast_token, "/ok")  # warm both apps' workers
    before = p50()
    answers: list[httpx2.Response] = []
    hanging = [
        threading.Thread(target=lambda: answers.append(call("slowco", "hangs", slow_token, "/hang")))
        for _ in range(4)
    ]
    for thread in hanging:
        thread.start()
    assert wait_until(lambda: sum(s.path == "/hang" for s in api.seen) == 2, 10)
    during = p50()
    # A's third and fourth calls are still waiting for A's own share: they never reached the upstream.
    assert sum(s.path == "/hang" for s in api.seen) == 2
    assert not answers
    api.release.set()
    for thread in hanging:
        thread.join(30)
    assert [a.json() for a in answers] == [{"status": 200}] * 4
    print(
        f"\nfair share: B p50 before {before * 1000:.1f} ms, during A's hang {during * 1000:.1f} ms, "
        f"ratio {during / before:.2f}"
    )
