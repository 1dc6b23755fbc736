"""The vendored CodeMirror 6 bundle of the app editor, as the console serves it.

``.ci/build-editor`` builds ``static/console/codemirror.js`` from the pinned packages of
``console/code_editor/package-lock.json`` and records its sha256 beside it; a test holds the two
together, so the bundle is only ever changed by rebuilding it. Served by the console itself (no static
files server needed, like the editor's other scripts), gzipped once in memory, under a URL that names
its digest so browsers may keep it.
"""

from __future__ import annotations

import functools
import gzip
from dataclasses import dataclass
from pathlib import Path

BUNDLE = Path(__file__).resolve().parent / "static" / "console" / "codemirror.js"
DIGEST_FILE = BUNDLE.with_name(BUNDLE.name + ".sha256")


@functools.cache
def recorded_digest() -> str:
    """The sha256 (hex) that .ci/build-editor recorded for the bundle."""
    return DIGEST_FILE.read_text(encoding="ascii").split()[0]


@dataclass(frozen=True)
class ServedBundle:
    body: bytes
    gzipped: bytes


@functools.cache
def served_bundle() -> ServedBundle:
    body = BUNDLE.read_bytes()
    return ServedBundle(body, gzip.compress(body, compresslevel=9, mtime=0))
