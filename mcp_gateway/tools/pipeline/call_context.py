"""The one request context of a call: who calls, from where, and what its client can show and answer.

Built once where a call enters (the protocol layer's handlers, ``protocol.context.call_context``;
a task's run; an agent's step; the console) and passed down explicitly to everything that serves
the call, in the worker thread too. Nothing below reads request state from anywhere else.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from mcp.types.version import LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

from apps_runtime.call_events import CallEvents
from core import tracing
from mcp_gateway.tools.pipeline.asks import asks_by_url, kinds_declared
from mcp_gateway.tools.pipeline.client_features import shows_ui
from mcp_gateway.tools.pipeline.tracing import traceparent_of
from tenants.callers import Caller
from tenants.models import Tenant


@dataclass(frozen=True)
class CallContext:
    """A call's tenant and caller and what its request says; frozen, built once per request.

    ``origin``: the public origin the request reached (``core.origin.scope_origin``), "" if none.
    ``protocol_version``: the client's; tools/list entries returned by ``search_tools`` are shaped
    for it. ``ui_host``: the client shows MCP Apps views. ``can_ask``: the kinds of question the
    client declared it answers (``tools.asks.kinds_declared``; ``elicitation`` is form mode), for a
    handler's questions; ``can_confirm``: whoever called can be asked to confirm a ``confirm`` tool
    (form elicitation, an agent run's approval), else such a call is refused unasked.
    ``can_ask_url``: the client declared URL-mode elicitation (``tools.asks.asks_by_url``): a step
    the person takes in their browser (connect an account, decide an approval) is asked with a URL
    (``tools.pipeline.url_asks``), else answered with a link.
    ``traceparent``: the request's checked W3C trace context. ``events``: where the handler's
    progress and log lines go (the protocol's relay, a task's status), None to drop them.
    ``parent_call_id``: an inner call of a ``run_code`` script names that call's audit ``call_id``.
    """

    tenant: Tenant
    caller: Caller
    origin: str = ""
    protocol_version: str = LATEST_HANDSHAKE_VERSION
    ui_host: bool = False
    can_ask: tuple[str, ...] = ()
    can_confirm: bool = False
    can_ask_url: bool = False
    traceparent: str | None = None
    events: CallEvents | None = None
    session_id: str | None = None
    parent_call_id: str = ""

    @classmethod
    def for_request(
        cls,
        tenant: Tenant,
        caller: Caller,
        *,
        origin: str | None,
        protocol_version: str,
        capabilities: Any,
        params: Any,
        events: CallEvents | None = None,
        session_id: str | None = None,
    ) -> CallContext:
        """The context of an MCP request: what its client declared (``capabilities``, the SDK's
        model or None) and its raw ``params`` (their ``_meta.traceparent``) read once, here."""
        kinds = kinds_declared(capabilities)
        return cls(
            tenant,
            caller,
            origin=origin or "",
            protocol_version=protocol_version,
            ui_host=shows_ui(capabilities),
            can_ask=kinds,
            can_confirm="elicitation" in kinds,  # a form, as a handler's elicitation questions
            can_ask_url=asks_by_url(capabilities),
            # The request's span when traces are exported (a child of the client's), else the client's.
            traceparent=tracing.current_traceparent() or traceparent_of(params),
            events=events,
            session_id=session_id,
        )

    @property
    def modern(self) -> bool:
        """A 2026-07-28 request: asked questions go back as an input-required result."""
        return self.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def trace_id(self) -> str:
        """The trace id of ``traceparent``, or ""."""
        return self.traceparent[3:35] if self.traceparent else ""

    @property
    def link_origin(self) -> str | None:
        """The origin absolute links use: PUBLIC_BASE_URL, else the request's (None outside one)."""
        return settings.PUBLIC_BASE_URL or self.origin or None

    def replace(self, **changes: Any) -> CallContext:
        return dataclasses.replace(self, **changes)
