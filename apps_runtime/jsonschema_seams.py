"""The private jsonschema modules ``json_schemas`` copies onto RE2, in one place, with a test.

jsonschema runs patterns with ``re.search`` inside its keyword modules and has no public hook to
swap the engine; ``json_schemas._on_re2`` copies those modules' functions with ``re`` replaced.
``tests/apps_runtime/test_jsonschema_seams.py`` fails if an upgrade moves them.
"""

from __future__ import annotations

from types import ModuleType

from jsonschema import _keywords, _legacy_keywords, _utils

# In dependency order: helpers first, so the keyword copies call the helper copies.
PATTERN_MODULES: tuple[ModuleType, ...] = (_utils, _keywords, _legacy_keywords)
