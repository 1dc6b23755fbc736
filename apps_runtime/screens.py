"""Screens: an app's HTML views, rendered once for both places they are shown.

A screen is an HTML file of the bundle plus the CSS, JavaScript and images it references by
relative path. Both the app's front-end path (``/t/<tenant>/apps/<app>/_screens/<name>``, whose host
page frames the document: ``screen_documents.py``) and MCP Apps hosts (``ui://<app>/<name>``, read
with ``resources/read``) get the same single document:
referenced files are inlined (scripts and styles as elements, images as ``data:`` URIs), because a
host renders the view from its text alone, in a sandboxed frame with no base URL.

A view written with the ext-apps ``App`` SDK imports it by its npm name,
``import { App } from "@modelcontextprotocol/ext-apps"``; rendering adds an import map that points
that name at the copy the platform serves (``SDK_PATH``), so a screen needs no build step. The
screen's CSP then names the platform's origin as a resource domain.

Rendering reads only the bundle (untrusted, validated at deploy by ``manifest/screens.py`` with the
same reference rules as here) and is bounded by the deploy's size caps.
"""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser

from apps_runtime.screen_documents import SANDBOX_FLAGS

SCREEN_MIME_TYPE = "text/html;profile=mcp-app"
UI_SCHEME = "ui"
UI_EXTENSION = "io.modelcontextprotocol/ui"
SDK_SPECIFIER = "@modelcontextprotocol/ext-apps"
SDK_VERSION = "2.0.4"
SDK_PATH = f"/_lcp/ext-apps/{SDK_VERSION}/app-with-deps.js"
SCREENS_SEGMENT = "_screens"  # the front-end path's reserved first segment

_CLOSE = {"script": re.compile(r"</script\s*>", re.I), "style": re.compile(r"</style\s*>", re.I)}
_REMOTE = re.compile(r"^https?://", re.I)
# Script types a browser runs (or reads as an import map): what a CSP must allow by hash. Data blocks
# (application/json) are never run.
_EXECUTED = frozenset({"", "module", "text/javascript", "application/javascript", "importmap"})
APP_INFO_ID = "lcp-app"


def screen_uri(app_name: str, screen_name: str) -> str:
    """The MCP Apps resource URI of a screen: unique per tenant, because app names are."""
    return f"{UI_SCHEME}://{app_name}/{screen_name}"


@dataclass(frozen=True)
class Reference:
    """A file or URL an element of the screen loads."""

    tag: str  # script, link or img
    url: str
    start: int  # the element's span in the HTML text (a script's includes its end tag)
    end: int
    start_tag: str  # the start tag as written
    script_type: str | None = None


@dataclass
class _Scan(HTMLParser):
    """References to inline, and the inline scripts' text (for CSP hashes)."""

    text: str
    references: list[Reference] = field(default_factory=list)
    inline_scripts: list[str] = field(default_factory=list)
    uses_sdk: bool = False
    head_end: int | None = None  # where an import map goes: right after <head>, if any

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self._lines = [0]
        for line in self.text.splitlines(keepends=True):
            self._lines.append(self._lines[-1] + len(line))
        self._script: tuple[dict, int, str] | None = None
        self._chunks: list[str] = []

    def _offset(self) -> int:
        line, col = self.getpos()
        return self._lines[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        start = self._offset()
        end = start + len(self.get_starttag_text() or "")
        if tag == "head" and self.head_end is None:
            self.head_end = end
        elif tag == "script":
            self._script, self._chunks = (values, start, self.get_starttag_text() or ""), []
        elif tag == "link" and "stylesheet" in values.get("rel", "").lower().split() and values.get("href"):
            self.references.append(Reference("link", values["href"], start, end, self.text[start:end]))
        elif tag == "img" and values.get("src"):
            self.references.append(Reference("img", values["src"], start, end, self.text[start:end]))

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._chunks.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag != "script" or self._script is None:
            return
        values, start, start_tag = self._script
        found = _CLOSE["script"].match(self.text, self._offset())
        end = found.end() if found else self._offset()
        body = "".join(self._chunks)
        if values.get("src"):
            kind = values.get("type")
            self.references.append(Reference("script", values["src"], start, end, start_tag, kind))
        elif values.get("type", "module").lower() in _EXECUTED:
            self.inline_scripts.append(body)
            self.uses_sdk = self.uses_sdk or SDK_SPECIFIER in body
        self._script = None


def scan(html: str) -> _Scan:
    """Parse a screen's HTML for what it loads."""
    found = _Scan(html)
    found.feed(html)
    found.close()
    return found


def resolve(html_path: str, url: str) -> str | None:
    """The bundle path a relative ``url`` of the screen at ``html_path`` names; None if it leaves the
    bundle, or is not a plain relative path (a scheme, a query, a fragment, an absolute path)."""
    if not url or _REMOTE.match(url) or url.startswith(("/", "\\")) or ":" in url.split("/")[0]:
        return None
    if any(c in url for c in "?#\\") or "\x00" in url:
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(html_path), url))
    if joined.startswith("../") or joined in ("..", ".") or joined.startswith("/"):
        return None
    return joined


def is_remote(url: str) -> bool:
    return bool(_REMOTE.match(url))


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of an absolute http(s) URL."""
    scheme, _, rest = url.partition("://")
    return f"{scheme.lower()}://{rest.split('/')[0].split('?')[0].split('#')[0].lower()}"


@dataclass(frozen=True)
class RenderedScreen:
    """A screen as one document, and what a Content-Security-Policy needs to know of it."""

    html: str
    script_hashes: tuple[str, ...]
    uses_sdk: bool


def _escaped(body: str, tag: str) -> str:
    """Text put inside a <script> or <style> element, unable to end it early."""
    return re.sub(rf"</({tag})", r"<\\/\1", body, flags=re.I)


def _inlined(ref: Reference, data: bytes, path: str) -> str:
    if ref.tag == "img":
        mime = mimetypes.guess_type(path)[0] or "application/octet-stream"
        uri = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        return re.sub(
            r"""(\bsrc\s*=\s*)(?:"[^"]*"|'[^']*'|[^\s>]+)""",
            lambda m: f'{m.group(1)}"{uri}"',
            ref.start_tag,
            count=1,
        )
    body = data.decode("utf-8")
    if ref.tag == "link":
        return f"<style>{_escaped(body, 'style')}</style>"
    plain_type = ref.script_type and re.fullmatch(r"[\w/+-]+", ref.script_type)
    kind = f' type="{ref.script_type}"' if plain_type else ""
    return f"<script{kind}>{_escaped(body, 'script')}</script>"


def render(
    html_path: str, read: Callable[[str], bytes], sdk_url: str, app_info: dict | None = None
) -> RenderedScreen:
    """The screen at ``html_path`` as one document: referenced bundle files inlined, an import map
    for the ext-apps SDK when a script imports it, and ``app_info`` as a JSON data block
    (``<script type="application/json" id="lcp-app">``: the wire names of the app's tools, the
    front-end's base path) for the view to read. ``read`` reads a bundle file."""
    html = read(html_path).decode("utf-8")
    found = scan(html)
    pieces, at = [], 0
    for ref in sorted(found.references, key=lambda r: r.start):
        path = resolve(html_path, ref.url)
        if path is None:
            continue  # remote (allowed by the CSP) or data:, left as written
        pieces += [html[at : ref.start], _inlined(ref, read(path), path)]
        at = ref.end
    pieces.append(html[at:])
    document = "".join(pieces)
    rendered = scan(document)
    head = ""
    if app_info is not None:
        head += f'<script type="application/json" id="{APP_INFO_ID}">{_json_text(app_info)}</script>'
    if rendered.uses_sdk:
        head += f'<script type="importmap">{_json_text({"imports": {SDK_SPECIFIER: sdk_url}})}</script>'
    if head:
        where = rendered.head_end or 0
        document = document[:where] + head + document[where:]
        rendered = scan(document)
    hashes = tuple(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode("ascii") + "'"
        for s in rendered.inline_scripts
    )
    return RenderedScreen(html=document, script_hashes=hashes, uses_sdk=rendered.uses_sdk)


def _json_text(value: dict) -> str:
    """JSON inside a <script> element: no ``<`` can close it."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def ui_csp(spec: dict, platform_origin: str | None, uses_sdk: bool) -> dict[str, list[str]]:
    """The screen's ``_meta.ui.csp`` for MCP Apps hosts: its declared origins, plus the platform's
    origin as a resource domain when it loads the SDK the platform serves."""
    declared = spec.get("csp") or {}
    csp = {key: list(values) for key, values in declared.items() if values}
    if uses_sdk and platform_origin and platform_origin not in csp.get("resourceDomains", []):
        csp["resourceDomains"] = [*csp.get("resourceDomains", []), platform_origin]
    return csp


def ui_meta(spec: dict, csp: dict[str, list[str]]) -> dict:
    """The ``_meta.ui`` of a screen's resource: CSP, permissions and border preference."""
    meta: dict = {"csp": csp}
    if spec.get("permissions"):
        meta["permissions"] = {name: {} for name in spec["permissions"]}
    if "prefersBorder" in spec:
        meta["prefersBorder"] = spec["prefersBorder"]
    return meta


def document_policy(
    spec: dict, rendered: RenderedScreen, *, sdk_url: str, host_origin: str, platform_origins: tuple[str, ...]
) -> str:
    """The Content-Security-Policy of a screen's document on the front-end path.

    ``sandbox`` gives the document an opaque origin even when its URL is opened directly (no cookies,
    no storage, nothing same-origin with the platform). Scripts run only by hash, and from the
    platform only the SDK file itself (``sdk_url``, a path-exact source): no other platform URL can be
    loaded as a script. Requests go only to the origins the screen declares, never to the platform's
    (``platform_origins`` are dropped from what it declares): the view reaches its app with
    ``callServerTool``, through the host page. Only the host page (``host_origin``) may frame it.
    """
    declared = spec.get("csp") or {}

    def names(key: str) -> list[str]:
        return [name for name in declared.get(key) or [] if origin_of(name) not in platform_origins]

    resources = names("resourceDomains")
    directives = {
        "sandbox": [SANDBOX_FLAGS],
        "default-src": ["'none'"],
        "script-src": [*([sdk_url] if rendered.uses_sdk else []), *rendered.script_hashes, *resources]
        or ["'none'"],
        "style-src": ["'unsafe-inline'", *resources],
        "img-src": ["data:", *resources],
        "font-src": resources or ["'none'"],
        "media-src": ["data:", *resources],
        "connect-src": names("connectDomains") or ["'none'"],
        "frame-src": names("frameDomains") or ["'none'"],
        "base-uri": names("baseUriDomains") or ["'none'"],
        "form-action": ["'none'"],
        "frame-ancestors": [host_origin],
    }
    return "; ".join(f"{key} {' '.join(values)}" for key, values in directives.items())
