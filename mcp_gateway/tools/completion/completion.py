"""completion/complete for prompt arguments and resource-template variables, as the caller.

Values come from the argument's (or variable's) ``enum`` in the manifest, filtered by the typed
prefix; from its ``complete`` route, run as the caller with ``?argument=<name>&value=<prefix>``
and the other arguments already given (so what it suggests is what the caller may see; an error
answer of the route offers nothing); or, for
a collection's record template without either, from the ids of the records the caller may read.
At most ``MAX_VALUES`` values are sent, each at most ``MAX_VALUE_CHARS`` characters.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types

from apps_runtime.dispatch import load_app
from apps_runtime.exceptions import RuntimeDomainError
from apps_runtime.records import RecordsScope, record_ids
from mcp_gateway.exceptions import ResourceNotFound, RouteRefused, Unavailable
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.pipeline.audit import audited_call
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.prompts.prompts import resolve_prompt
from mcp_gateway.tools.resources.resources import (
    ReadRequest,
    ResourceEntry,
    run_read_route,
    visible_resources,
)
from tenants.callers import Caller
from tenants.models import Tenant

Outcome = ToolCallAudit.Outcome
MAX_VALUES = 100  # the spec's most values in one completion
MAX_VALUE_CHARS = 200


class UnknownCompletion(Unavailable):
    """A completion for a prompt argument or template variable that does not exist (JSON-RPC -32602)."""

    def __init__(self, what: str):
        super().__init__(f"Nothing to complete: {what[:200]}")


def _template(tenant: Tenant, caller: Caller, uri_template: str) -> ResourceEntry:
    for entry in visible_resources(tenant, caller):
        if entry.is_template and entry.pattern.uri == uri_template:
            return entry
    raise ResourceNotFound(uri_template)


def _completion(values: list[str], more: bool = False) -> types.Completion:
    kept = [v for v in values if isinstance(v, str) and len(v) <= MAX_VALUE_CHARS]
    more = more or len(kept) > MAX_VALUES
    return types.Completion(values=kept[:MAX_VALUES], has_more=more)


def _from_route(
    req: ReadRequest, app_name: str, route: str, name: str, value: str, given: dict
) -> types.Completion:
    query = {**given, "argument": name, "value": value}
    try:
        body = run_read_route(req, app_name, route, query=query, is_resource=False)
    except RouteRefused:
        return types.Completion(values=[])  # the route refused this caller or prefix: nothing to offer
    values = body.get("values") if isinstance(body, dict) else body
    return _completion(values if isinstance(values, list) else [])


def complete(
    call: CallContext,
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: dict[str, str] | None = None,
) -> types.CompleteResult:
    """Suggestions for ``argument`` of the prompt or template ``ref``; one audit row when a route
    runs (a completion from the manifest or the records runs no tenant code).

    Raises:
        PromptUnavailable, ResourceNotFound: the prompt or template is not the caller's.
        UnknownCompletion: no such argument or variable.
        RouteAnswerRefused: the completion route answered an error or failed.
    """
    tenant, caller = call.tenant, call.caller
    if isinstance(ref, types.PromptReference):
        entry: Any = resolve_prompt(tenant, caller, ref.name)
        spec = entry.arguments.get(argument.name)
        if spec is None:
            raise UnknownCompletion(f"{ref.name} has no argument {argument.name}")
        name, app_name = entry.wire_name, entry.app_name
    else:
        entry = _template(tenant, caller, ref.uri)
        if argument.name not in entry.pattern.names:
            raise UnknownCompletion(f"{ref.uri} has no variable {argument.name}")
        spec = (entry.spec.get("variables") or {}).get(argument.name) or {}
        name, app_name = entry.wire_name, entry.app_name
    value = argument.value
    if "enum" in spec:
        return types.CompleteResult(completion=_completion([v for v in spec["enum"] if v.startswith(value)]))
    if "complete" in spec:
        given = {k: v for k, v in (context or {}).items() if isinstance(v, str) and k != argument.name}
        with audited_call(call, name, {"argument": argument.name}, method="completion/complete") as audit:
            req = ReadRequest(call, getattr(ref, "uri", None) or f"prompt:{name}", {}, audit)
            completion = _from_route(req, app_name, spec["complete"], argument.name, value, given)
        return types.CompleteResult(completion=completion)
    if isinstance(entry, ResourceEntry) and entry.kind == "record":
        return types.CompleteResult(completion=_record_ids(tenant, caller, entry, value))
    return types.CompleteResult(completion=types.Completion(values=[]))


def _record_ids(tenant: Tenant, caller: Caller, entry: ResourceEntry, prefix: str) -> types.Completion:
    loaded = load_app(tenant, entry.app_name)
    scope = RecordsScope(
        tenant_id=loaded.app.tenant_id, app_id=loaded.app.pk, compiled=loaded.compiled, caller=caller
    )
    try:
        ids = record_ids(scope, entry.spec["collection"], prefix, MAX_VALUES + 1)
    except RuntimeDomainError:
        return types.Completion(values=[])
    return _completion(ids)
