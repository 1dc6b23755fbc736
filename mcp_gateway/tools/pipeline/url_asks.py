"""Asking the person to take a step in their browser: a URL-mode elicitation (MCP 2025-11-25 on).

Two steps are asked this way: connecting the caller's own account at another service, which a
handler's ``request.http.get(url, connection=...)`` needs (``asked_to_connect``), and deciding the
out-of-band approval of a ``confirm`` tool (``tools.call.approvals``). A client that declared URL mode
(``CallContext.can_ask_url``) gets the question, pointing at the console's page; once the person
took the step, the call runs again (``protocol.asking`` waits for it). Any other client, or a call
with no absolute URL to point at, gets the answer it always got: an error result with the link.

The URL is a console page behind the person's own sign-in: never pre-authenticated, no credential or
personal data in it, so a link passed to someone else connects or decides nothing for the caller.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable

import mcp.types as types

from apps_runtime.egress import connections
from mcp_gateway.tools.pipeline.asks import URL_KEY, Asked, OutOfBand
from mcp_gateway.tools.pipeline.call_context import CallContext


def asked_at_url(
    call: CallContext,
    message: str,
    url: str,
    elicitation_id: str,
    *,
    done: Callable[[], bool],
    unanswered: types.CallToolResult,
) -> Asked | types.CallToolResult:
    """The URL-mode question sending the person to ``url``, or ``unanswered`` for a client that
    cannot be asked so (or when ``url`` is not absolute: no public origin is known)."""
    if not call.can_ask_url or not url.startswith(("https://", "http://")):
        return unanswered
    params = types.ElicitRequestURLParams(
        message=message,
        url=url,
        # 2026-07-28 dropped the id: a retry carries the answer, under the question's key.
        elicitation_id=None if call.modern else elicitation_id,
    )
    return Asked({URL_KEY: types.ElicitRequest(params=params)}, out_of_band=OutOfBand(done, unanswered))


def asked_to_connect(
    call: CallContext, provider: str, unanswered: types.CallToolResult
) -> Asked | types.CallToolResult:
    """Ask the caller to connect their own ``provider`` account (the console's Connected accounts
    page), which the tool's outbound request needs; ``unanswered`` is the error result with the link."""
    user_id = call.caller.user_id
    if user_id is None:  # a service principal has no account of its own to connect
        return unanswered
    message = (
        f"This tool uses your own {provider} account, which you have not connected yet. Connect it "
        "on this page; the call goes on once it is connected."
    )
    return asked_at_url(
        call,
        message,
        connections.accounts_url(call.tenant.slug, call.link_origin),
        "connect_" + secrets.token_urlsafe(16),
        done=functools.partial(connections.connected, call.tenant.pk, user_id, provider),
        unanswered=unanswered,
    )
