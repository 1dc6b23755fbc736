"""Deploy checks of ``screens`` and of the tools' ``ui``: what the manifest schema cannot say.

- a screen's ``file`` is an HTML file of the bundle, UTF-8, at most ``HTML_MAX_BYTES``;
- every file it references (``<script src>``, ``<link rel=stylesheet href>``, ``<img src>``) is a
  relative path that stays in the bundle, is present, is not the app's code, and the screen with
  everything inlined stays under ``RENDERED_MAX_BYTES``; a remote URL is on one of its
  ``csp.resourceDomains``; no other scheme than ``data:`` for images;
- each CSP origin is well formed (``CSP_DOMAIN_PATTERN``: it goes into a Content-Security-Policy);
- no route path starts with ``/_screens`` (the screens' front-end path);
- a tool's ``ui.screen`` names a screen of the app.

Every problem is at its JSON pointer; values of the wrong type are left to the schema pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from apps_runtime.manifest import schema as s
from apps_runtime.manifest.problems import Problem, child, pointer, shorten
from apps_runtime.screens import SCREENS_SEGMENT, is_remote, origin_of, resolve, scan

KiB = 1024
HTML_MAX_BYTES = 256 * KiB
RENDERED_MAX_BYTES = 1024 * KiB
_CSP_DOMAIN = re.compile(s.CSP_DOMAIN_PATTERN)


def screen_problems(
    manifest: Any, sizes: Mapping[str, int], files: Mapping[str, bytes] | None
) -> list[Problem]:
    """Every problem of ``screens``, of routes under ``/_screens`` and of the tools' ``ui``.

    ``sizes`` maps bundle paths to their sizes; ``files`` has their bytes when the caller read them
    (a deploy does), so references can be checked.
    """
    manifest = manifest if isinstance(manifest, dict) else {}
    screens = manifest.get("screens") if isinstance(manifest.get("screens"), dict) else {}
    problems: list[Problem] = []
    for name, spec in screens.items():
        if isinstance(spec, dict):
            problems += _screen(spec, pointer("screens", name), sizes, files)
    problems += _reserved_routes(manifest)
    problems += _tool_screens(manifest, screens)
    return problems


def _screen(
    spec: dict, base: str, sizes: Mapping[str, int], files: Mapping[str, bytes] | None
) -> list[Problem]:
    problems = _csp_problems(spec.get("csp"), child(base, "csp"))
    path = spec.get("file")
    if not isinstance(path, str) or not re.search(r"\.html?$", path):
        return problems  # the schema says what a screen's file must be
    ptr = child(base, "file")
    if path not in sizes:
        return [*problems, Problem(ptr, f"file {path!r} is not in the bundle: add it or fix the path")]
    if sizes[path] > HTML_MAX_BYTES:
        return [*problems, Problem(ptr, f"file {path!r} is {sizes[path]:,} bytes, over {HTML_MAX_BYTES:,}")]
    if files is None:
        return problems
    try:
        html = files[path].decode("utf-8")
    except UnicodeDecodeError:
        return [*problems, Problem(ptr, f"file {path!r} is not UTF-8 text: save it as UTF-8")]
    remote_ok = set((spec.get("csp") or {}).get("resourceDomains") or [])
    total = len(files[path])
    for ref in scan(html).references:
        problem, size = _reference(path, ref.tag, ref.url, sizes, remote_ok)
        if problem:
            problems.append(Problem(ptr, problem))
        total += size * 4 // 3 if ref.tag == "img" else size  # images go in as base64
    if total > RENDERED_MAX_BYTES:
        problems.append(
            Problem(
                ptr,
                f"screen {path!r} with the files it loads is {total:,} bytes, over {RENDERED_MAX_BYTES:,}",
            )
        )
    return problems


def _reference(
    html_path: str, tag: str, url: str, sizes: Mapping[str, int], remote_ok: set[str]
) -> tuple[str, int]:
    """A problem with one reference (or ""), and the bytes it adds when inlined."""
    shown = shorten(url, 120)
    if is_remote(url):
        origin = origin_of(url)
        if not any(_covers(domain, origin) for domain in remote_ok):
            return f"<{tag}> loads {shown!r}: add {origin!r} to csp.resourceDomains, or bundle the file", 0
        return "", 0
    if tag == "img" and url.startswith("data:"):
        return "", 0
    target = resolve(html_path, url)
    if target is None:
        return f"<{tag}> loads {shown!r}: use a path relative to the screen, inside the bundle", 0
    if target not in sizes:
        return f"<{tag}> loads {shown!r}, but {target!r} is not in the bundle", 0
    if target == "app.json" or target.endswith(".py"):
        return f"<{tag}> loads {shown!r}: the app's code and manifest are never served", 0
    return "", sizes[target]


def _covers(domain: str, origin: str) -> bool:
    if "://*." in domain:
        scheme, _, host = domain.partition("://*.")
        return origin.startswith(f"{scheme}://") and origin.split("://", 1)[1].endswith("." + host)
    return origin == domain


def _csp_problems(csp: Any, base: str) -> list[Problem]:
    if not isinstance(csp, dict):
        return []
    problems = []
    for key in s.CSP_DOMAIN_KEYS:
        values = csp.get(key)
        for index, value in enumerate(values if isinstance(values, list) else []):
            if isinstance(value, str) and not _CSP_DOMAIN.fullmatch(value):
                problems.append(
                    Problem(
                        child(base, key, index),
                        f"{shorten(value, 80)!r} is not an origin: write https://host, https://*.host or "
                        "https://host:port (http only for localhost), with no path",
                    )
                )
    return problems


def _reserved_routes(manifest: dict) -> list[Problem]:
    routes = manifest.get("routes") if isinstance(manifest.get("routes"), dict) else {}
    return [
        Problem(
            pointer("routes", key),
            f"route {key!r} is under /{SCREENS_SEGMENT}, where the app's screens are served: "
            "choose another path",
        )
        for key in routes
        if isinstance(key, str) and key.partition(" ")[2].split("/")[1:2] == [SCREENS_SEGMENT]
    ]


def _tool_screens(manifest: dict, screens: dict) -> list[Problem]:
    mcp = manifest.get("mcp") if isinstance(manifest.get("mcp"), dict) else {}
    tools = mcp.get("tools") if isinstance(mcp.get("tools"), list) else []
    problems = []
    for index, tool in enumerate(tools):
        ui = tool.get("ui") if isinstance(tool, dict) else None
        screen = ui.get("screen") if isinstance(ui, dict) else None
        if isinstance(screen, str) and screen not in screens:
            names = ", ".join(sorted(screens)) or "none declared"
            problems.append(
                Problem(
                    pointer("mcp", "tools", index, "ui", "screen"),
                    f"{screen!r} is not a screen of this app (screens: {shorten(names, 150)})",
                )
            )
    return problems
