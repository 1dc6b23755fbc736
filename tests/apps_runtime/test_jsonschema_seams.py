"""``apps_runtime.jsonschema_seams``: the private jsonschema modules the RE2 copies rely on."""

from __future__ import annotations

import re

from jsonschema import validators

from apps_runtime import json_schemas
from apps_runtime.jsonschema_seams import PATTERN_MODULES


def test_the_keyword_modules_still_run_patterns_with_re_and_back_the_dialects():
    utils, keywords, legacy = PATTERN_MODULES
    for module in PATTERN_MODULES:
        assert vars(module)["re"] is re  # what the copies replace with RE2
    assert validators.Draft202012Validator.VALIDATORS["pattern"] is keywords.pattern
    assert validators.Draft3Validator.VALIDATORS["properties"] is legacy.properties_draft3
    assert "re" in utils.find_additional_properties.__code__.co_names


def test_the_copies_run_patterns_on_re2():
    # A pattern RE2 refuses (a backreference) is one error with an error id, never a backtracking run.
    validator = json_schemas.compile_schema({"type": "string", "pattern": "^(a)\\1$"})
    errors = list(validator.iter_errors("aa"))
    assert len(errors) == 1 and "error id" in errors[0].message
