"""Deploy a 1,000-tool manifest into a tenant already holding 10,000 tools.

Baseline in the same run: JSON-Schema-validating that manifest alone (the floor any deploy pays).
Also deploys the same manifest into an empty tenant, to show the cost follows the manifest and not
the tenant's size.

    .venv/bin/python bench/bench_deploy.py
"""

from __future__ import annotations

import time

from _setup import setup_django

setup_django()

from jsonschema import Draft202012Validator  # noqa: E402

from apps_runtime.deploy import deploy_bundle  # noqa: E402
from apps_runtime.manifest import MANIFEST_SCHEMA, bundle_from_mapping  # noqa: E402
from tenants import actions  # noqa: E402


def manifest(app: str, tools: int) -> tuple[dict, dict]:
    return (
        {
            "name": app,
            "routes": {"GET /items/{item_id}": {"handler": "server/get.py", "auth": "user"}},
            "mcp": {
                "tools": [
                    {
                        "name": f"tool_{i}",
                        "title": f"Tool {i}",
                        "description": f"Get item number {i} of this app by its id.",
                        "route": "GET /items/{item_id}",
                        "inputSchema": {
                            "type": "object",
                            "properties": {
                                # distinct per tool, so no cache of identical schemas flatters the run
                                "item_id": {"type": "string", "description": f"Id of item kind {i}."},
                                "verbose": {"type": "boolean"},
                            },
                            "required": ["item_id"],
                            "additionalProperties": False,
                        },
                        "annotations": {"readOnlyHint": True, "destructiveHint": False},
                    }
                    for i in range(tools)
                ]
            },
        },
        {"server/get.py": "def handle(request):\n    return {}\n"},
    )


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    big = actions.create_tenant("big", acting_user=None)
    for n in range(10):
        deploy_bundle(big, bundle_from_mapping(*manifest(f"filler_{n}", 1000)), acting_user=None)
    empty = actions.create_tenant("empty", acting_user=None)
    subject = manifest("subject", 1000)

    validator = Draft202012Validator(MANIFEST_SCHEMA)
    schema_ms = min(timed(lambda: list(validator.iter_errors(subject[0]))) for _ in range(3))
    empty_ms = timed(lambda: deploy_bundle(empty, bundle_from_mapping(*subject), acting_user=None))
    big_ms = timed(lambda: deploy_bundle(big, bundle_from_mapping(*subject), acting_user=None))
    small_ms = timed(
        lambda: deploy_bundle(empty, bundle_from_mapping(*manifest("small", 100)), acting_user=None)
    )

    print("deploy of a 1,000-tool manifest")
    print(f"  JSON-Schema validation alone (baseline) {schema_ms:8.1f} ms   1.00x")
    print(f"  deploy into an empty tenant            {empty_ms:8.1f} ms   {empty_ms / schema_ms:5.2f}x")
    print(f"  deploy into a tenant of 10,000 tools   {big_ms:8.1f} ms   {big_ms / schema_ms:5.2f}x")
    print(f"  100-tool manifest into a small tenant  {small_ms:8.1f} ms   {small_ms / schema_ms:5.2f}x")
    print(
        f"  tenant size effect (10,000 vs 0 tools): {big_ms / empty_ms:.2f}x;"
        f" manifest size effect (1,000 vs 100 tools): {empty_ms / small_ms:.2f}x"
    )


if __name__ == "__main__":
    main()
