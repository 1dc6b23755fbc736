"""What the child can and cannot see, and that nothing survives from one call to the next."""

import json
import os

import pytest

from .conftest import TIERS


def test_environment_is_empty_inside_the_handler(run_handler):
    os.environ["SANDBOX_TEST_SECRET"] = "s3cr3t"  # a host secret the child must never see
    try:
        outcome = run_handler("""
            import os

            def handle(request):
                try:  # no /proc at tier 1, and Landlock refuses it at tier 2
                    with open("/proc/self/environ", "rb") as f:
                        initial = f.read().decode()
                except OSError:
                    initial = ""
                return {"environ": dict(os.environ), "initial": initial}
        """)
    finally:
        del os.environ["SANDBOX_TEST_SECRET"]

    assert outcome.body == {"environ": {}, "initial": ""}


def test_handler_cannot_import_django(run_handler):
    outcome = run_handler("""
        import sys

        def handle(request):
            try:
                import django  # noqa: F401
            except ImportError:
                return {"django": "absent", "site_packages": [p for p in sys.path if "-packages" in p]}
            return {"django": "present"}
    """)

    assert outcome.body == {"django": "absent", "site_packages": []}


def test_bundle_dir_is_first_on_the_path_and_cwd_is_a_scratch_dir(run_handler, bundle_dir, sandbox):
    outcome = run_handler("""
        import os, sys

        def handle(request):
            with open("scratch.txt", "w") as f:
                f.write("temporary")
            return {"path0": sys.path[0], "cwd": os.getcwd()}
    """)

    assert outcome.body["path0"] == str(bundle_dir)
    assert outcome.body["cwd"] != str(bundle_dir)
    assert not os.path.exists(outcome.body["cwd"])  # removed after the call


def test_module_state_does_not_leak_between_calls(run_handler):
    source = """
        import json
        import state

        def handle(request):
            seen = {"counter": state.counter, "dumps": json.dumps({"a": 1})}
            state.counter += 1
            json.dumps = lambda *args, **kwargs: "patched"
            return seen
    """
    files = {"state.py": "counter = 0\n"}

    first = run_handler(source, files=files)
    second = run_handler(source, files=files)

    assert first.body == second.body == {"counter": 0, "dumps": json.dumps({"a": 1})}


def test_platform_sdk_is_importable_and_the_sandbox_modules_are_not(run_handler):
    outcome = run_handler("""
        import importlib

        def handle(request):
            import platform_sdk
            found = {}
            for name in ("child", "zygote", "protocol", "sdk", "apps_runtime", "apps_runtime.sandbox"):
                try:
                    importlib.import_module(name)
                    found[name] = True
                except ImportError:
                    found[name] = False
            return {"sdk": platform_sdk.NotFound.__module__, "found": found}
    """)

    assert outcome.body["sdk"] == "platform_sdk"
    assert not any(outcome.body["found"].values())


def test_bundle_module_named_like_a_sandbox_module_is_the_bundles_own(run_handler):
    outcome = run_handler(
        """
        import protocol, child

        def handle(request):
            return [protocol.WHO, child.WHO]
    """,
        files={"protocol.py": "WHO = 'tenant protocol'\n", "child.py": "WHO = 'tenant child'\n"},
    )

    assert outcome.body == ["tenant protocol", "tenant child"]


FD_LISTING = """
    import os, stat

    def handle(request):
        found = {}
        for fd in range(1024):
            try:
                mode = os.fstat(fd).st_mode
            except OSError:
                continue
            found[fd] = "dir" if stat.S_ISDIR(mode) else "other"
        return found
"""


def test_child_has_only_its_log_and_protocol_fds(run_handler):
    outcome = run_handler(FD_LISTING)

    # 0 stdin (/dev/null), 1+2 log pipe, 3 protocol
    assert outcome.body == {"0": "other", "1": "other", "2": "other", "3": "other"}


@pytest.mark.parametrize("tier", TIERS)
def test_beyond_the_protocol_fds_a_child_holds_only_read_only_directory_handles(run_at, tier):
    outcome = run_at(tier, FD_LISTING)

    # Below tier 1, a child that drops to the sandbox uid reaches the stdlib and its bundle through O_PATH
    # handles (boot.py): directories, opened read-only, that Landlock confines at tier 2.
    assert {fd: kind for fd, kind in outcome.body.items() if int(fd) <= 3} == dict.fromkeys("0123", "other")
    assert set(outcome.body.values()) - {"other"} <= {"dir"}
    assert all(int(fd) > 3 for fd, kind in outcome.body.items() if kind == "dir")
