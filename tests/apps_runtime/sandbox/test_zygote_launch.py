"""The zygote outlives the thread that happened to start it (bubblewrap's parent-death signal follows the
forking *thread*): a sandbox first used from a short-lived thread keeps serving after that thread ends.
"""

import threading

import pytest

from apps_runtime.sandbox import Invocation, Sandbox

from .bundles import refuse_data_calls, write_bundle


@pytest.mark.parametrize("tier", [1, 2, 3])
def test_a_zygote_started_from_a_thread_that_ended_keeps_serving(bundles_root, bundle_dir, tier):
    write_bundle(bundle_dir, {"server/one.py": "def handle(request):\n    return 1\n"})
    invocation = Invocation(str(bundle_dir), "server/one.py", {})
    box = Sandbox(bundle_root=str(bundles_root), tier=tier)
    try:
        starter = threading.Thread(target=lambda: box.run(invocation, refuse_data_calls))
        starter.start()
        starter.join()
        zygote = box.zygote_pid

        results = [box.run(invocation, refuse_data_calls).body for _ in range(20)]

        assert results == [1] * 20
        assert box.zygote_pid == zygote  # the same zygote: never killed and replaced
    finally:
        box.close()
