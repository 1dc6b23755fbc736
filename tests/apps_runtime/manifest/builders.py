"""A valid manifest to break one rule at a time, and helpers to edit it by JSON pointer."""

import copy

import pytest

from apps_runtime.manifest import DeployRejected, Problem, validate_manifest
from apps_runtime.manifest.problems import split_pointer

DELETE = object()

FILES = frozenset({"app.json", "server/search.py", "server/get.py", "server/jobs/reindex.py"})

_VALID = {
    "name": "case_portal",
    "title": "Case Portal",
    "description": "Tracks client cases.",
    "version": "1.0.0",
    "access": "role:case_reader,case_writer",
    "collections": {
        "cases": {
            "schema": {"type": "object", "properties": {"client_name": {"type": "string"}}},
            "read": "role:case_reader,case_writer",
            "write": "role:case_writer",
        }
    },
    "routes": {
        "GET /cases/search": {"handler": "server/search.py", "auth": "role:case_reader,case_writer"},
        "GET /cases/{case_id}": {"handler": "server/get.py", "auth": "user", "timeoutMs": 5000},
        "POST /jobs/reindex": {"handler": "server/jobs/reindex.py", "auth": "internal"},
    },
    "mcp": {
        "tools": [
            {
                "name": "find_case",
                "title": "Find a case",
                "description": "Find cases by client name or reference. Use it before opening a new case.",
                "route": "GET /cases/search",
                "inputSchema": {
                    "type": "object",
                    "properties": {"query": {"type": "string", "minLength": 2}},
                    "required": ["query"],
                    "additionalProperties": False,
                },
                "annotations": {"readOnlyHint": True, "destructiveHint": False},
            },
            {
                "name": "get_case",
                "description": "Get one case by its id, as returned by find_case.",
                "route": "GET /cases/{case_id}",
                "inputSchema": {
                    "type": "object",
                    "properties": {"case_id": {"type": "string"}},
                    "required": ["case_id"],
                },
                "outputSchema": {"type": "object", "properties": {"client_name": {"type": "string"}}},
                "annotations": {"readOnlyHint": True, "destructiveHint": False},
            },
        ]
    },
    "jobs": {
        "reindex": {"route": "POST /jobs/reindex", "schedule": "0 3 * * *", "runAs": "role:case_writer"}
    },
}


def valid_manifest() -> dict:
    """A manifest using every feature, valid and free of warnings; a fresh copy each time."""
    return copy.deepcopy(_VALID)


def edited(edits: list[tuple[str, object]], manifest: dict | None = None) -> dict:
    """``manifest`` (default: the valid one) with each (pointer, value) set, or removed for DELETE."""
    result = valid_manifest() if manifest is None else manifest
    for ptr, value in edits:
        *parents, last = split_pointer(ptr)
        target = result
        for token in parents:
            target = target[int(token)] if isinstance(target, list) else target[token]
        if isinstance(target, list):
            if value is DELETE:
                del target[int(last)]
            elif int(last) == len(target):
                target.append(value)
            else:
                target[int(last)] = value
        elif value is DELETE:
            del target[last]
        else:
            target[last] = value
    return result


def problems_of(manifest: object, files=FILES, **kwargs) -> list[Problem]:
    """The problems a rejected deploy lists (fails the test if the manifest is accepted)."""
    with pytest.raises(DeployRejected) as info:
        validate_manifest(manifest, files, **kwargs)
    return info.value.problems


def pointers_of(manifest: object, files=FILES, **kwargs) -> list[str]:
    return sorted({problem.pointer for problem in problems_of(manifest, files, **kwargs)})
