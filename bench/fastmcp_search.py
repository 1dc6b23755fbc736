"""FastMCP's ``BM25SearchTransform`` ranking the benchmark's queries: run by bench_search.py in its own venv.

FastMCP is not a dependency of the platform (it pins ``mcp`` on its own schedule), so bench_search.py
creates a separate venv with ``fastmcp`` and runs this file there. Standard input: ``{"k": K,
"tools": {user: [tools/list entries]}, "queries": [[user, text], ...]}``; standard output:
``{"rankings": [[tool name, ...], ...]}``, one list per query, best first. Each user's tools become
FastMCP ``Tool`` objects with the same name, title, description and input schema, and the transform
ranks them with its own index (``_search``, what its ``search_tools`` tool calls).
"""

import asyncio
import json
import sys

from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.tools.base import Tool


async def main() -> None:
    job = json.load(sys.stdin)
    tools = {
        user: [
            Tool(
                name=t["name"],
                title=t.get("title"),
                description=t.get("description"),
                parameters=t.get("inputSchema") or {"type": "object"},
            )
            for t in entries
        ]
        for user, entries in job["tools"].items()
    }
    transforms = {user: BM25SearchTransform(max_results=job["k"]) for user in tools}
    rankings = []
    for user, text in job["queries"]:
        found = await transforms[user]._search(tools[user], text)
        rankings.append([t.name for t in found])
    json.dump({"rankings": rankings}, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
