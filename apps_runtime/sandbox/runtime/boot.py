"""Launcher of the zygote: ``python -I -S boot.py CTRL_FD CONFIG_JSON``.

Under ``-I`` the script's directory is not on ``sys.path``, and it must not be: a bundle's own modules could
otherwise collide with ours. So the runtime package is loaded by file path under a private name.

Before anything else, per the host's CONFIG_JSON:
  * ``fd_paths``: reach the standard library through ``/proc/self/fd/N`` (an O_PATH fd opened now, while we
    may still traverse every directory). The children drop to an unprivileged uid that may be unable to
    traverse the interpreter's install dir (e.g. a Python under /root); a magic link skips the ancestors.
"""

import fcntl
import importlib.util
import os
import sys

PACKAGE = "_sandbox_runtime"


def _route_stdlib_through_fds() -> dict[int, str]:
    """Replace the stdlib entries of sys.path (and of imported packages' __path__) by fd magic links."""
    fds: dict[int, str] = {}
    mapping: dict[str, str] = {}
    for entry in sys.path:
        if entry in mapping or not os.path.exists(entry):
            continue
        low = os.open(entry, os.O_PATH | os.O_CLOEXEC)
        fd = fcntl.fcntl(low, fcntl.F_DUPFD_CLOEXEC, 10)  # clear of 0-3, which every child reassigns
        os.close(low)
        fds[fd] = entry
        mapping[entry] = f"/proc/self/fd/{fd}"

    def remap(path: str) -> str:
        for real, alias in mapping.items():
            if path == real or path.startswith(real + os.sep):
                return alias + path[len(real) :]
        return path

    sys.path[:] = [mapping.get(entry, entry) for entry in sys.path if entry in mapping]
    sys.path_importer_cache.clear()
    for module in list(sys.modules.values()):
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [remap(p) for p in search]
        spec = getattr(module, "__spec__", None)
        locations = getattr(spec, "submodule_search_locations", None)
        if isinstance(locations, list) and locations is not search:
            locations[:] = [remap(p) for p in locations]
    return fds


def _load_runtime() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        PACKAGE, os.path.join(here, "__init__.py"), submodule_search_locations=[here]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)


def main() -> None:
    import json

    sys.dont_write_bytecode = True  # never write .pyc files into a tenant's bundle
    ctrl_fd = int(sys.argv[1])
    # The launch config (protocol.LaunchConfig) is read raw here: fd_paths must act before any import.
    config = json.loads(sys.argv[2])
    if config.get("fd_paths"):
        config["stdlib_fds"] = _route_stdlib_through_fds()
    _load_runtime()
    protocol = importlib.import_module(PACKAGE + ".protocol")
    importlib.import_module(PACKAGE + ".zygote").main(ctrl_fd, protocol.LaunchConfig.decode(config))


if __name__ == "__main__":
    main()
