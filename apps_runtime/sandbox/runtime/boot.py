"""Launcher of the zygote: ``python -I -S boot.py CTRL_FD``.

Under ``-I`` the script's directory is not on ``sys.path``, and it must not be: a bundle's own modules could
otherwise collide with ours. So the runtime package is loaded by file path under a private name.
"""

import importlib.util
import os
import sys

PACKAGE = "_sandbox_runtime"


def _load_runtime():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        PACKAGE, os.path.join(here, "__init__.py"), submodule_search_locations=[here]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return importlib.import_module(PACKAGE + ".zygote")


if __name__ == "__main__":
    sys.dont_write_bytecode = True  # never write .pyc files into a tenant's bundle
    _load_runtime().main(int(sys.argv[1]))
