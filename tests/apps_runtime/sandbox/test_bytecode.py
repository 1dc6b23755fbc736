"""Handler bytecode is compiled once per handler file by the host, not once per call by the child; what it
compiles is exactly what the file holds now, and errors are reported as before.
"""

import os

import pytest

from apps_runtime.sandbox import HandlerFailed
from apps_runtime.sandbox.bytecode import BytecodeCache

from .bundles import HANDLER, write_bundle
from .conftest import TIERS


def test_a_handler_file_is_compiled_once_and_its_code_reused(bundle_dir):
    write_bundle(bundle_dir, {HANDLER: "def handle(request):\n    return 1\n"})
    cache = BytecodeCache()

    first = cache.get(str(bundle_dir), HANDLER)

    assert first is not None
    assert cache.get(str(bundle_dir), HANDLER) is first


def test_a_handler_rewritten_in_place_runs_its_new_code(run_handler):
    # Same size, same second: only the bytes differ.
    assert run_handler("def handle(request):\n    return 'a'\n").body == "a"
    assert run_handler("def handle(request):\n    return 'b'\n").body == "b"


def test_files_outside_the_bundle_and_non_files_get_no_cached_code(bundle_dir, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("def handle(request):\n    return 1\n")
    os.symlink(outside, bundle_dir / "link.py")
    os.mkfifo(bundle_dir / "fifo.py")
    cache = BytecodeCache()

    assert cache.get(str(bundle_dir), "link.py") is None
    assert cache.get(str(bundle_dir), str(outside)) is None
    assert cache.get(str(bundle_dir), "../outside.py") is None
    assert cache.get(str(bundle_dir), "fifo.py") is None  # and does not block


@pytest.mark.parametrize("tier", TIERS)
def test_tracebacks_through_cached_code_show_the_bundle_relative_path_of_nested_functions(run_at, tier):
    source = """
        class Helper:
            def fail(self):
                raise ValueError("boom")

        def handle(request):
            return Helper().fail()
    """
    run_at(tier, "def handle(request):\n    return 1\n")  # the host's cache now holds another version
    with pytest.raises(HandlerFailed) as failed:
        run_at(tier, source)

    trace = failed.value.trace
    assert 'File "server/handler.py", line 7, in handle' in trace
    assert 'File "server/handler.py", line 4, in fail' in trace


def test_a_syntax_error_is_still_reported_by_the_child(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler("def handle(request)\n    return 1\n")

    assert failed.value.kind == "handler_error"
    assert "SyntaxError" in failed.value.trace
    assert 'File "server/handler.py", line 1' in failed.value.trace
