"""Output budgets: what a tool result may cost a model to read, and cutting a long list to fit.

A tool's budget is its manifest's ``maxOutputTokens``, else the tenant setting of that name. The
result's size is the token estimate (``token_estimate``) of its ``structuredContent``, the JSON that
also goes, once, in the text block a model reads. Over budget, a result with exactly one top-level
list (a handler's list is wrapped as ``{"result": [...]}``, so it has one) keeps as many leading
items as fit and says so in ``"truncated": {"returned": n, "total": m}``; anything else is refused
with its size and the budget. Nothing is ever cut inside a string.

Items are measured one by one with a running total, stopping at the first that does not fit: the
cost is the JSON of the kept items, never a re-serialisation per candidate length.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_gateway.tools.catalog.token_estimate import bytes_for_tokens, json_bytes, tokens_for_bytes
from tenants.models import Tenant

BUDGET_SETTING = "maxOutputTokens"
TRUNCATED_KEY = "truncated"

# Argument names that page through a tool's results, by what they do.
_OFFSET_ARGS = ("offset", "skip", "start", "start_index", "startIndex")
_SIZE_ARGS = ("limit", "page_size", "pageSize", "per_page", "perPage", "max_results", "maxResults")
_CURSOR_ARGS = ("cursor", "page_token", "pageToken", "after", "next_cursor", "nextCursor", "page")


@dataclass(frozen=True)
class OutputBudget:
    """One tool's budget, and the paging arguments its ``inputSchema`` offers (for the hint)."""

    tokens: int
    arguments: frozenset[str] = frozenset()

    @property
    def max_bytes(self) -> int:
        return bytes_for_tokens(self.tokens)

    def first(self, names: tuple[str, ...]) -> str | None:
        return next((name for name in names if name in self.arguments), None)


@dataclass(frozen=True)
class Truncated:
    """A result cut to its budget: the new structuredContent and what was kept."""

    structured: dict
    key: str
    returned: int
    total: int


class OverBudget(Exception):
    """A result over its budget that cannot be cut at an item boundary; the message says why."""

    def __init__(self, size_tokens: int, budget: OutputBudget, reason: str):
        self.size_tokens, self.budget, self.reason = size_tokens, budget, reason
        super().__init__(
            f"The result is about {size_tokens:,} tokens, over this tool's output budget of "
            f"{budget.tokens:,} tokens, and {reason}. Call the tool with narrower arguments."
        )


def output_budget(tenant: Tenant, max_output_tokens: int | None, input_schema: dict | None) -> OutputBudget:
    """The budget of a tool: its own ``maxOutputTokens`` or the tenant's default."""
    properties = (input_schema or {}).get("properties")
    arguments = frozenset(properties) if isinstance(properties, dict) else frozenset()
    return OutputBudget(max_output_tokens or tenant.number(BUDGET_SETTING), arguments)


def cut_to_budget(structured: dict, size_bytes: int, budget: OutputBudget) -> Truncated:
    """``structured`` with its one top-level list cut to the leading items that fit ``budget``.

    Raises:
        OverBudget: no single top-level list, a ``truncated`` key already there, or not even the
            first item fits.
    """
    size_tokens = tokens_for_bytes(size_bytes)
    lists = [key for key, value in structured.items() if isinstance(value, list)]
    if len(lists) != 1:
        raise OverBudget(size_tokens, budget, "it is not a list that could be cut at an item boundary")
    if TRUNCATED_KEY in structured:
        raise OverBudget(size_tokens, budget, f'it already has a "{TRUNCATED_KEY}" key')
    key = lists[0]
    items = structured[key]
    total = len(items)
    # The counts are written as ``total`` twice: ``returned`` never has more digits.
    envelope = {**structured, key: [], TRUNCATED_KEY: {"returned": total, "total": total}}
    room = budget.max_bytes - json_bytes(envelope)
    returned = _items_that_fit(items, room)
    if returned == 0:
        raise OverBudget(size_tokens, budget, "not even its first item fits")
    kept = {**structured, key: items[:returned], TRUNCATED_KEY: {"returned": returned, "total": total}}
    return Truncated(kept, key, returned, total)


def _items_that_fit(items: list, room: int) -> int:
    used = 0
    for index, item in enumerate(items):
        used += json_bytes(item) + (1 if index else 0)  # the comma before every item but the first
        if used > room:
            return index
    return len(items)


def truncation_note(cut: Truncated, budget: OutputBudget) -> str:
    """The line telling the model what it got and how to ask for the rest, in the tool's own terms."""
    head = (
        f'Truncated: returned {cut.returned} of {cut.total} items of "{cut.key}" to stay within the '
        f"output budget of {budget.tokens:,} tokens."
    )
    return f"{head} {_rest_hint(cut, budget)}"


def _rest_hint(cut: Truncated, budget: OutputBudget) -> str:
    offset, size, cursor = (budget.first(names) for names in (_OFFSET_ARGS, _SIZE_ARGS, _CURSOR_ARGS))
    smaller = f" and `{size}` at most {cut.returned}" if size else ""
    if offset:
        return (
            f"To get the rest, call the tool again with the same arguments, `{offset}` increased by "
            f"{cut.returned}{smaller}."
        )
    if size:
        then = f"page with `{cursor}`" if cursor else "narrower arguments"
        return f"To get the rest, call the tool again with `{size}` at most {cut.returned} and {then}."
    if cursor:
        return (
            f"`{cursor}` continues after the full page, not after the items returned here: narrow the "
            "query to see the rest."
        )
    return "To get the rest, call the tool again with narrower arguments."
