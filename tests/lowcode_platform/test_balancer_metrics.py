"""The haproxy configuration of docs/production.md never passes /metrics through: the replicas serve
it to loopback, and a balancer on their host connects from loopback."""

from __future__ import annotations

import shutil

import httpx2
import pytest

from tests.support.cluster import Balancer
from tests.support.requirements import missing

pytestmark = pytest.mark.slow


@pytest.fixture
def balancer(live_url, transactional_db, tmp_path):
    """haproxy, configured as docs/production.md says, in front of the test server (which reads the test
    database: /healthz and /metrics do)."""
    if shutil.which("haproxy") is None:
        missing("haproxy is not installed (make test installs it: .ci/install-system-deps)")
    proxy = Balancer(tmp_path, [int(live_url.rsplit(":", 1)[1])])
    # The test server answers in a thread of this process, slower than a replica on a busy host:
    # a health check that takes over a second here is no dead replica.
    proxy.config.write_text(proxy.config.read_text().replace("inter 1s", "inter 10s"))
    proxy.start()
    yield proxy
    proxy.process.stop()


@pytest.mark.parametrize(
    "path", ["/metrics", "/metrics/", "/metrics?format=text", "/%6Detrics", "//metrics", "/METRICS"]
)
def test_the_balancer_refuses_metrics_however_the_path_is_spelt(balancer, live_url, path):
    assert httpx2.get(f"{live_url}/metrics", timeout=30).status_code == 200  # loopback, directly
    assert httpx2.get(f"{balancer.url}{path}", timeout=30).status_code == 403
    rest = httpx2.get(f"{balancer.url}/healthz", timeout=30)
    assert rest.status_code == 200, balancer.process.log_tail()  # the rest passes
