"""The one mapping from a route's outcome to an MCP ``CallToolResult``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp.types as types

from apps_runtime.dispatch import RouteResult
from apps_runtime.json_schemas import SchemaValidator
from core.error_ids import error_id_note
from mcp_gateway.tools.catalog.output_budget import OutputBudget, OverBudget, cut_to_budget, truncation_note
from mcp_gateway.tools.catalog.token_estimate import compact_json, json_bytes, tokens_for_bytes
from mcp_gateway.tools.pipeline.arguments import argument_problems
from mcp_gateway.tools.pipeline.links import NoLinkOrigin
from mcp_gateway.tools.pipeline.rich_content import (
    CONTENT,
    STRUCTURED,
    ContentLimits,
    ContentOrigin,
    ContentRefused,
    is_explicit_content,
    map_content,
)


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=text)]


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=_text(message), is_error=True)


def invalid_arguments_result(problems: list[str]) -> types.CallToolResult:
    return error_result("Invalid arguments:\n" + "\n".join(problems))


def json_result(
    value: Any, output_validator: SchemaValidator | None = None, budget: OutputBudget | None = None
) -> types.CallToolResult:
    """Handler JSON as structuredContent (non-objects wrapped as {"result": ...}) and as one text block.

    Over ``budget``, a list is cut at an item boundary and anything else is an error (``output_budget``).
    """
    structured = value if isinstance(value, dict) else {"result": value}
    if output_validator is not None:
        problems = argument_problems(output_validator, structured)
        if problems:
            return error_result("The tool's result does not match its outputSchema:\n" + "\n".join(problems))
    text = compact_json(structured)
    if budget is not None:
        size = len(text.encode("utf-8"))
        if size > budget.max_bytes:
            return _cut_result(structured, size, budget, output_validator)
    return types.CallToolResult(content=_text(text), structured_content=structured)


def _cut_result(
    structured: dict, size: int, budget: OutputBudget, output_validator: SchemaValidator | None
) -> types.CallToolResult:
    try:
        cut = cut_to_budget(structured, size, budget)
    except OverBudget as err:
        return error_result(str(err))
    # The client checks structuredContent against the advertised outputSchema: a cut result the
    # schema refuses (additionalProperties false without "truncated", minItems) is not sent.
    if output_validator is not None and argument_problems(output_validator, cut.structured):
        reason = 'a cut result would not match its outputSchema (declare a "truncated" property to allow it)'
        return error_result(str(OverBudget(tokens_for_bytes(size), budget, reason)))
    content = _text(compact_json(cut.structured)) + _text(truncation_note(cut, budget))
    return types.CallToolResult(content=content, structured_content=cut.structured)


def content_result(
    body: dict,
    output_validator: SchemaValidator | None = None,
    budget: OutputBudget | None = None,
    link_url: Callable[[str], str] | None = None,
    origin: ContentOrigin | None = None,
) -> types.CallToolResult:
    """A handler's explicit ``{"content": [...]}`` (see ``rich_content``), checked item by item.

    Explicit content is never cut: over ``budget`` it is an error naming its size.
    """
    structured = body.get(STRUCTURED)
    if structured is not None and not isinstance(structured, dict):
        return error_result(str(ContentRefused(STRUCTURED, "must be an object")))
    if output_validator is not None:
        if structured is None:
            return error_result(
                str(ContentRefused(STRUCTURED, "the tool declares an outputSchema: return it too"))
            )
        problems = argument_problems(output_validator, structured)
        if problems:
            return error_result("The tool's result does not match its outputSchema:\n" + "\n".join(problems))
    try:
        limits = ContentLimits.from_settings()
        mapped = map_content(body[CONTENT], link_url or _no_links, limits, origin=origin)
    except (ContentRefused, NoLinkOrigin) as err:
        return error_result(str(err))
    size = mapped.readable_bytes + (json_bytes(structured) if structured is not None else 0)
    if budget is not None and size > budget.max_bytes:
        return error_result(str(OverBudget(tokens_for_bytes(size), budget, "explicit content is never cut")))
    return types.CallToolResult(content=mapped.blocks, structured_content=structured)


def _no_links(route: str) -> str:
    raise ContentRefused("resource_link", "links to app routes are not available here")


def handler_message(body: Any, status: int) -> str:
    """The message of a handler's error answer: its ``error``, ``message`` or ``detail`` string."""
    if isinstance(body, dict):
        for key in ("error", "message", "detail"):
            if isinstance(body.get(key), str) and body[key]:
                return body[key]
    return f"The route answered status {status}."


def route_result(
    result: RouteResult,
    output_validator: SchemaValidator | None = None,
    budget: OutputBudget | None = None,
    link_url: Callable[[str], str] | None = None,
    origin: ContentOrigin | None = None,
) -> types.CallToolResult:
    """Map a route's result: failures carry the error id, 4xx/5xx the handler's message.

    ``link_url`` makes the absolute URL of a route path of the app (resource links); ``origin``
    names the app, for the URIs its embedded resources may use.
    """
    if result.error_id is not None:  # failed
        # The caller is often not who can read the failure: say who can, and where. A timeout says
        # so, with the limit: the caller may retry with less work, or ask for a longer timeoutMs.
        what = "Tool failed"
        if result.timeout_ms is not None:
            what = f"Tool timed out after {result.timeout_ms / 1000:g} s (the route's time limit)"
        return error_result(
            f"{what} {error_id_note(result.error_id)}. A tenant admin reads what happened at "
            f"{result.error_url} or on the tenant console's Errors page."
        )
    if result.status >= 400:
        message = handler_message(result.body, result.status)
        size = len(message.encode("utf-8"))
        if budget is not None and size > budget.max_bytes:
            message = str(OverBudget(tokens_for_bytes(size), budget, "an error message is never cut"))
        return error_result(message)
    if is_explicit_content(result.body):
        return content_result(result.body, output_validator, budget, link_url, origin)
    return json_result(result.body, output_validator, budget)
