"""The console's Content-Security-Policy: scripts only from the platform's own URLs, no inline script
and no eval; styles from the platform, the console's own inline stylesheet (by its hash), and, on the
editor's page, the styles CodeMirror injects (a fresh nonce per response, ``EditorView.cspNonce``,
which the page's script reads from the console's ``<style nonce>``).

Other pages carry no nonce, so a page answers the same bytes to everyone it is the same for (the
console's 404 must not tell a forbidden page from a missing one).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import secrets
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string


@functools.cache
def _stylesheet_source() -> str:
    # What base.html and not_found.html put in their <style>: the same include, rendered alike.
    digest = hashlib.sha256(render_to_string("console/console.css").encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def policy(style_nonce: str | None = None) -> str:
    styles = ["'self'", _stylesheet_source(), *([f"'nonce-{style_nonce}'"] if style_nonce else [])]
    # form-action is left out on purpose: connecting an account posts a form that redirects to the
    # provider's sign-in page, which Chromium checks against form-action.
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            f"style-src {' '.join(styles)}",
            "img-src 'self' data:",
            "object-src 'none'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
        ]
    )


def render_under_policy(
    request: HttpRequest,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    status: int = 200,
    style_nonce: bool = False,
) -> HttpResponse:
    """``render`` with the console's policy on the response; ``style_nonce`` for a page whose script
    injects styles (the nonce is then ``csp_nonce`` in the context)."""
    nonce = secrets.token_urlsafe(18) if style_nonce else None
    response = render(request, template, {**(context or {}), "csp_nonce": nonce}, status=status)
    response["Content-Security-Policy"] = policy(nonce)
    return response
