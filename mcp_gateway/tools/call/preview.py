"""What a caller would get from ``tools/list`` before anyone connects: the console's and the API's preview.

The listing comes from the gateway's own ``tool_calls.list_tools``, page by page, shaped for the wire
by the SDK's own serializer, so a preview can never drift from what an MCP client receives. The
token estimate is the platform's one rule (``token_estimate``) applied to the ``tools`` array. The
caller's ``resources/list``, ``resources/templates/list`` and ``prompts/list`` are previewed the same
way (``extras``): what a client that loads them all into its context pays.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

from mcp.types.methods import serialize_server_result
from mcp.types.version import LATEST_HANDSHAKE_VERSION

from mcp_gateway.tools.call import calls as tool_calls
from mcp_gateway.tools.catalog import token_estimate
from mcp_gateway.tools.catalog.builtins import SEARCH_LIMIT_DEFAULT
from mcp_gateway.tools.prompts import prompts
from mcp_gateway.tools.resources import resources
from tenants.actions import clean_roles
from tenants.callers import Caller, caller_for
from tenants.models import Tenant
from tenants.scoping import access_membership, access_token
from tenants.tenant_settings import setting_spec

# The protocol version the official SDK client negotiates by default; tools/list entries are shaped
# for it exactly as the server's runner shapes them.
WIRE_VERSION = LATEST_HANDSHAKE_VERSION
APP_TOOLS = "customAppsMcpTools"
DISCOVERY = "toolDiscovery"
ESTIMATE_RULE = token_estimate.RULE.replace("compact JSON", "compact JSON of the tools array")


@dataclass(frozen=True)
class ToolListing:
    """A caller's complete tools/list: every page's entries, as JSON objects in wire form."""

    tools: list[dict]

    @property
    def count(self) -> int:
        return len(self.tools)

    @property
    def estimated_tokens(self) -> int:
        return token_estimate.estimate_tokens(self.tools)

    def as_json(self) -> dict:
        """The preview API's body."""
        return {"tools": self.tools, "count": self.count, "estimated_tokens": self.estimated_tokens}


# The other lists a caller gets: method -> (the array's key on the wire, the gateway's page function).
EXTRA_LISTS = {
    "resources/list": ("resources", resources.list_resources),
    "resources/templates/list": ("resourceTemplates", resources.list_templates),
    "prompts/list": ("prompts", prompts.list_prompts),
}


@dataclass(frozen=True)
class Preview:
    """A caller's listing under the tenant's settings, what flipping ``customAppsMcpTools`` would give,
    and the listing in each ``toolDiscovery`` mode."""

    caller: Caller
    listing: ToolListing
    app_tools_on: bool
    flipped: ToolListing
    refusal: str | None  # why the gateway would refuse this caller outright, if it would
    discovery: str = "list"
    modes: dict[str, ToolListing] = dataclasses.field(default_factory=dict)
    extras: dict[str, ToolListing] = dataclasses.field(default_factory=dict)  # by the array's wire key

    @property
    def search_answer_tokens(self) -> int:
        """About what one search_tools answer costs: its default number of this caller's entries."""
        every = self.modes.get("list", self.listing)
        return round(every.estimated_tokens / every.count * SEARCH_LIMIT_DEFAULT) if every.count else 0


def role_caller(tenant: Tenant, roles: list[str], *, read_only: bool = False) -> Caller:
    """A member holding exactly ``roles`` (no account behind it: the catalog looks only at the rights).

    Raises:
        InvalidValue: a role name breaks the role pattern, or too many roles.
    """
    # Authenticated without a user account, like a job's service principal; is_service changes
    # nothing the catalog asks.
    return Caller(
        tenant_id=tenant.pk,
        username="(preview)",
        is_member=True,
        roles=frozenset(clean_roles(roles)),
        read_only=read_only,
        is_service=True,
    )


def member_caller(tenant: Tenant, username: str, *, read_only: bool = False) -> Caller:
    """The caller a token of member ``username`` would be (read-only when asked).

    Raises:
        NotAMember: no such member of the tenant.
    """
    membership = access_membership(tenant, username)
    caller = caller_for(tenant, membership.user)
    return dataclasses.replace(caller, read_only=read_only) if read_only else caller


def token_caller(tenant: Tenant, token_id: int) -> tuple[Caller, str | None]:
    """The caller a token of the tenant proves, and why the gateway would refuse it (None: it would not).

    Raises:
        TokenNotFound: no such token in the tenant.
    """
    token = access_token(tenant, token_id)
    refusal = None if token.is_active else "this token is revoked or expired: the endpoint answers 401"
    return caller_for(tenant, token.user, token), refusal


def tools_list(tenant: Tenant, caller: Caller) -> ToolListing:
    """Every entry of the caller's tools/list, following the gateway's cursors to the last page."""
    tools: list[dict] = []
    cursor = None
    while True:
        page = tool_calls.list_tools(tenant, caller, cursor)
        wire = serialize_server_result(
            "tools/list", WIRE_VERSION, page.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        tools += wire["tools"]
        cursor = page.next_cursor
        if cursor is None:
            return ToolListing(tools)


def listed(tenant: Tenant, caller: Caller, method: str) -> ToolListing:
    """Every entry of the caller's ``method`` list (one of ``EXTRA_LISTS``), in wire form."""
    key, list_page = EXTRA_LISTS[method]
    items: list[dict] = []
    cursor = None
    while True:
        page = list_page(tenant, caller, cursor)
        dumped = page.model_dump(by_alias=True, mode="json", exclude_none=True)
        items += serialize_server_result(method, WIRE_VERSION, dumped)[key]
        cursor = page.next_cursor
        if cursor is None:
            return ToolListing(items)


def extras(tenant: Tenant, caller: Caller) -> dict[str, ToolListing]:
    """The caller's resources, resource templates and prompts, by the array's wire key."""
    return {key: listed(tenant, caller, method) for method, (key, _) in EXTRA_LISTS.items()}


def preview(tenant: Tenant, caller: Caller, *, refusal: str | None = None) -> Preview:
    """The caller's listing now, and with ``customAppsMcpTools`` switched the other way."""
    app_tools_on = tenant.switch(APP_TOOLS)
    if refusal is None and not tenant.setting("mcpServer"):
        refusal = "the MCP endpoint is switched off (setting mcpServer): every caller gets 404"
    return Preview(
        caller=caller,
        listing=tools_list(tenant, caller),
        app_tools_on=app_tools_on,
        flipped=tools_list(_with_setting(tenant, APP_TOOLS, not app_tools_on), caller),
        refusal=refusal,
        discovery=tenant.choice(DISCOVERY),
        modes={
            mode: tools_list(_with_setting(tenant, DISCOVERY, mode), caller)
            for mode in setting_spec(DISCOVERY).choices or ()  # a choice setting: never None
        },
        extras=extras(tenant, caller),
    )


def _with_setting(tenant: Tenant, key: str, value: object) -> Tenant:
    """An unsaved copy of ``tenant`` with one setting changed: the gateway's functions answer for it."""
    changed = copy.copy(tenant)
    changed.settings = {**tenant.settings, key: value}
    return changed
