"""What the client of the request being served can show: MCP Apps views or not.

A tool that shows a screen may be listed only to clients that render MCP Apps
(``ui.requiresUiHost``), and a tool meant for views alone (``ui.visibility == ["app"]``) is never in
``tools/list`` and answers only clients that render views. The client says so in its capabilities:
``extensions["io.modelcontextprotocol/ui"].mimeTypes`` holding ``text/html;profile=mcp-app``, in
``initialize`` (2025-11-25 sessions) or in every request's ``_meta`` (2026-07-28). The protocol layer
reads it once per request into the call's ``CallContext.ui_host``.

The gateway cannot tell a view's ``tools/call`` from the model's: the host proxies both over one
connection. The extension makes the host responsible for keeping app-only tools from the model;
the gateway keeps them from every client that is not such a host.
"""

from __future__ import annotations

from typing import Any

from apps_runtime.screens import SCREEN_MIME_TYPE, UI_EXTENSION


def shows_ui(capabilities: Any) -> bool:
    """Whether client capabilities (the SDK's model or a plain dict) declare MCP Apps views."""
    if capabilities is None:
        return False
    if not isinstance(capabilities, dict):
        capabilities = capabilities.model_dump(by_alias=True, exclude_none=True)
    for key in ("extensions", "experimental"):  # early hosts declared it as experimental
        declared = capabilities.get(key)
        ui = declared.get(UI_EXTENSION) if isinstance(declared, dict) else None
        if isinstance(ui, dict):
            mime_types = ui.get("mimeTypes")
            if isinstance(mime_types, list) and SCREEN_MIME_TYPE in mime_types:
                return True
    return False
