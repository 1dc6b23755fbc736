"""Warnings about tools whose long results could never be cut to their output budget. The deploy goes ahead.

Over its budget, a result with one top-level list is cut and gains a ``truncated`` key (see the
gateway's ``output_budget``); a closed ``outputSchema`` that does not declare that key refuses the cut
result, so the caller gets an error instead of the first items.
"""

from collections.abc import Iterator
from typing import Any

from apps_runtime.manifest.compatibility import iter_tools
from apps_runtime.manifest.problems import Problem, pointer

TRUNCATED_KEY = "truncated"


def output_warnings(manifest: Any) -> Iterator[Problem]:
    """A warning for each tool whose outputSchema has one array property and refuses ``truncated``."""
    for index, tool in iter_tools(manifest):
        schema = tool.get("outputSchema")
        if isinstance(schema, dict) and _would_refuse_a_cut(schema):
            yield Problem(
                pointer("mcp", "tools", index, "outputSchema"),
                f'declare a "{TRUNCATED_KEY}" property ({{"type": "object"}}): a result over the output '
                "budget is cut to its first items and marked truncated, which this closed schema refuses, "
                "so the caller would get an error instead",
            )


def _would_refuse_a_cut(schema: dict) -> bool:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    arrays = [p for p in properties.values() if isinstance(p, dict) and p.get("type") == "array"]
    closed = schema.get("additionalProperties") is False or schema.get("unevaluatedProperties") is False
    return closed and len(arrays) == 1 and TRUNCATED_KEY not in properties
