"""The editor's CodeMirror: the committed bundle is what its pinned build recorded, it is served by the
console under the console's CSP (no inline script, no eval), and the page without JavaScript is the
plain form. (Completion, hover and diagnostics in a browser: test_browser_editor.py.)"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

from console import codemirror

SOURCE = Path(codemirror.__file__).parent / "code_editor"
EDIT = "/console/acme/apps/cases/edit"


def policy_of(response) -> dict[str, list[str]]:
    directives = [d.split() for d in response["Content-Security-Policy"].split(";") if d.strip()]
    return {d[0]: d[1:] for d in directives}


def test_the_committed_bundle_is_the_one_its_build_recorded():
    """Nobody edits the bundle by hand: .ci/build-editor writes it and its digest together."""
    digest = hashlib.sha256(codemirror.BUNDLE.read_bytes()).hexdigest()
    assert digest == codemirror.recorded_digest(), "rebuild it with `make editor-bundle`, never edit it"


def test_the_bundle_holds_exactly_the_pinned_packages():
    pinned = json.loads((SOURCE / "package.json").read_text())["dependencies"]
    locked = json.loads((SOURCE / "package-lock.json").read_text())["packages"]
    for name, version in pinned.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned exactly: {version}"
        assert locked[f"node_modules/{name}"]["version"] == version
    banner = codemirror.BUNDLE.read_text(encoding="utf-8").split("*/", 1)[0]
    assert "Built by .ci/build-editor; do not edit." in banner
    for name, version in pinned.items():
        if name.startswith("@codemirror/"):
            assert f"{name}@{version}" in banner


@pytest.mark.django_db
def test_the_editor_page_is_under_a_policy_without_inline_script_or_eval(signed_in, acme, deploy):
    deploy(acme)
    client = signed_in("admin")
    first, second = client.get(EDIT), client.get(EDIT)
    policy = policy_of(first)
    assert policy["script-src"] == ["'self'"]  # no 'unsafe-inline', no 'unsafe-eval', no other origin
    assert policy["default-src"] == ["'self'"] and policy["object-src"] == ["'none'"]
    page = first.content.decode()
    # Styles: the platform's, the console's <style> by its hash, and CodeMirror's by this response's nonce.
    style = re.search(r'<style nonce="([^"]+)">(.*?)</style>', page, re.S)
    digest = base64.b64encode(hashlib.sha256(style.group(2).encode()).digest()).decode()
    assert policy["style-src"] == ["'self'", f"'sha256-{digest}'", f"'nonce-{style.group(1)}'"]
    assert "unsafe-inline" not in str(policy)
    assert policy_of(second)["style-src"][2] != policy["style-src"][2]  # a fresh nonce per response
    scripts = re.findall(r"<script\b[^>]*>", page)
    assert scripts == [
        '<script src="/console/_editor.js" defer>',
        '<script src="/console/_code_editor.js" type="module">',
    ]  # every script from a URL of the platform, none inline
    # Without JavaScript the form is the editor: one textarea per file, posted by Check/Save/Deploy.
    assert 'name="file:app.json"' in page and 'name="file:server/search.py"' in page
    assert 'data-schema-url="/api/schema/manifest.json"' in page


@pytest.mark.django_db
def test_every_console_page_carries_the_policy(signed_in, acme, deploy):
    deploy(acme)
    admin, member = signed_in("admin"), signed_in("member")
    for response in (
        admin.get("/console/"),
        admin.get("/console/acme/apps/"),
        member.get("/console/acme/tokens/"),
        member.get(EDIT),  # the console's own 404 for a page that is not the member's
    ):
        policy = policy_of(response)
        assert policy["script-src"] == ["'self'"], response.request["PATH_INFO"]
        assert not any(s.startswith("'nonce-") for s in policy["style-src"])  # only the editor needs one


def test_the_code_editor_imports_the_bundle_by_its_digest(client):
    module = client.get("/console/_code_editor.js")
    assert module["Content-Type"] == "text/javascript"
    url = f"/console/_codemirror.js?v={codemirror.recorded_digest()[:16]}"
    assert f'import * as cm from "{url}";' in module.content.decode()

    kept = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert kept["Content-Encoding"] == "gzip" and kept["Vary"] == "Accept-Encoding"
    assert gzip.decompress(kept.content) == codemirror.BUNDLE.read_bytes()
    assert kept["Cache-Control"] == "public, max-age=31536000, immutable"
    plain = client.get("/console/_codemirror.js?v=stale")
    assert plain.content == codemirror.BUNDLE.read_bytes() and "Content-Encoding" not in plain
    assert plain["Cache-Control"] == "max-age=300"  # not kept long under a URL that names no digest
