"""The app or route option ``"isolation"``: ``"version"`` (default) lets calls of one app version share a warm
worker, so module globals persist between them; ``"call"`` gives every call a fresh sandbox child. Checked
at deploy; a deploy or rollback retires the app's warm workers.
"""

import pytest

from apps_runtime.manifest import DeployRejected
from apps_runtime.sandbox import get_sandbox

pytestmark = pytest.mark.django_db

COUNTER = "CALLS = []\n\ndef handle(request):\n    CALLS.append(1)\n    return {'calls': len(CALLS)}\n"
FILES = {"server/count.py": COUNTER}


def manifest(app_isolation: str | None = None, route_isolation: str | None = None) -> dict:
    route = {"handler": "server/count.py", "auth": "public"}
    if route_isolation is not None:
        route["isolation"] = route_isolation
    fresh = {"handler": "server/count.py", "auth": "public", "isolation": "call"}
    shared = {"handler": "server/count.py", "auth": "public", "isolation": "version"}
    result = {"name": "counter", "routes": {"GET /count": route, "GET /fresh": fresh, "GET /shared": shared}}
    if app_isolation is not None:
        result["isolation"] = app_isolation
    return result


def counts(client, path: str, times: int = 2) -> list[int]:
    responses = [client.get(f"/t/acme/apps/counter/{path}") for _ in range(times)]
    assert all(r.status_code == 200 for r in responses), [r.content for r in responses]
    return [r.json()["calls"] for r in responses]


def test_calls_of_one_version_share_module_globals_unless_the_route_isolates_each_call(acme, deploy, client):
    deploy(acme, manifest(), FILES)
    assert counts(client, "count") == [1, 2]
    assert counts(client, "fresh") == [1, 1]


def test_the_apps_isolation_applies_to_its_routes_and_a_routes_own_wins(acme, deploy, client):
    deploy(acme, manifest(app_isolation="call"), FILES)
    assert counts(client, "count") == [1, 1]
    assert counts(client, "shared") == [1, 2]


@pytest.mark.parametrize(
    ("app_isolation", "route_isolation", "pointer"),
    [("sometimes", None, "/isolation"), (None, "process", "/routes/GET ~1count/isolation")],
)
def test_an_unknown_isolation_is_refused_at_deploy(acme, deploy, app_isolation, route_isolation, pointer):
    with pytest.raises(DeployRejected) as refused:
        deploy(acme, manifest(app_isolation, route_isolation), FILES)
    assert pointer in [problem.pointer for problem in refused.value.problems]


def test_a_deploy_and_a_rollback_retire_the_apps_warm_workers(
    acme, deploy, client, django_capture_on_commit_callbacks
):
    from apps_runtime.deploy import rollback_app

    with django_capture_on_commit_callbacks(execute=True):
        deploy(acme, manifest(), FILES)
    assert counts(client, "count") == [1, 2]
    drained = get_sandbox().pool_stats()["recycles"]["drained"]
    with django_capture_on_commit_callbacks(execute=True):
        deploy(acme, manifest(), FILES)
    assert get_sandbox().pool_stats()["recycles"]["drained"] == drained + 1
    assert counts(client, "count") == [1, 2]
    with django_capture_on_commit_callbacks(execute=True):
        rollback_app(acme, "counter", acting_user=None)
    # Back on the first version, in a new worker: the one that counted to 2 for it was retired.
    assert counts(client, "count", times=1) == [1]
