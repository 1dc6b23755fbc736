"""Defaults the manifest leaves implicit; the runtime reads them here so it agrees with the validator.

- ``access`` (who may use the app at all) defaults to ``user``.
- A collection's ``read`` defaults to ``user``.
- A collection's ``write`` defaults to its ``read``, except that a ``public`` read gives a ``user``
  write: anonymous writes must be asked for explicitly with ``"write": "public"``.
"""

from collections.abc import Mapping
from typing import Any

DEFAULT_ACCESS = "user"
DEFAULT_COLLECTION_READ = "user"


def app_access(manifest: Mapping[str, Any]) -> str:
    """The app's ``access`` expression, defaulted."""
    return manifest.get("access", DEFAULT_ACCESS)


def collection_read(collection: Mapping[str, Any]) -> str:
    """A collection's ``read`` expression, defaulted."""
    return collection.get("read", DEFAULT_COLLECTION_READ)


def collection_write(collection: Mapping[str, Any]) -> str:
    """A collection's ``write`` expression, defaulted (see the module docstring)."""
    if "write" in collection:
        return collection["write"]
    read = collection_read(collection)
    return "user" if read == "public" else read
