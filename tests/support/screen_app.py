"""The test app (``tests.support.apps``) with screens: a card shown by tools of every visibility."""

from __future__ import annotations

import copy

from tests.support.apps import HANDLERS, MANIFEST, READ, WRITE, _tool

CARD_HTML = """<!doctype html>
<html><head><title>Card</title><link rel="stylesheet" href="card.css"></head>
<body><h1 id="title">Card</h1><img src="../img/dot.png" alt="">
<script type="module" src="card.js"></script></body></html>
"""
CARD_JS = (
    'import { App } from "@modelcontextprotocol/ext-apps";\n'
    'const app = new App({name: "card", version: "1"});\n'
)
CARD_CSS = "h1 { color: teal; }\n"
DOT_PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)

FILES = {
    **HANDLERS,
    "screens/card.html": CARD_HTML,
    "screens/card.js": CARD_JS,
    "screens/card.css": CARD_CSS,
    "img/dot.png": DOT_PNG,
    "screens/plain.html": "<!doctype html><p>Writers only.</p>",
}


def screen_manifest() -> dict:
    """The test app with a ``card`` screen (any member), a ``plain`` one (writers) and tools showing
    the card: to everyone (``get_case``), only to UI hosts (``card_only``), only from views (``refresh``)."""
    manifest = copy.deepcopy(MANIFEST)
    manifest["screens"] = {
        "card": {
            "file": "screens/card.html",
            "title": "Case card",
            "description": "One case.",
            "csp": {"connectDomains": ["https://api.example.com"]},
            "permissions": ["clipboardWrite"],
            "prefersBorder": True,
        },
        "plain": {"file": "screens/plain.html", "auth": WRITE},
    }
    tools = manifest["mcp"]["tools"]
    for tool in tools:
        if tool["name"] == "get_case":
            tool["ui"] = {"screen": "card"}
    props = {"case_id": {"type": "string"}}
    tools.append(
        _tool(
            "card_only",
            "GET /cases/{case_id}",
            props,
            ["case_id"],
            ui={"screen": "card", "requiresUiHost": True},
        )
    )
    tools.append(
        _tool(
            "refresh",
            "GET /cases/{case_id}",
            props,
            ["case_id"],
            ui={"screen": "card", "visibility": ["app"]},
        )
    )
    return manifest


__all__ = ["FILES", "READ", "screen_manifest"]
