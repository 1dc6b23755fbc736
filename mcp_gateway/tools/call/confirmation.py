"""Confirmation before a tool marked ``confirm`` runs: the question, the user's verdict, the refusals.

How the question reaches the user (elicitation in either protocol era) is ``protocol.asking``; this
module is what both eras share and what ``tools.calls.preflight`` consults before the route runs.

The question is built from the tool's title and the call's arguments, both untrusted (the tenant
wrote the title, the model the arguments): every value is shown as JSON, with control, format
(bidi overrides, zero-width) and separator characters escaped, so no argument can start a line of
its own or pose as the platform's wording; each part and the whole are bounded in length.
"""

from __future__ import annotations

import enum
import json
import unicodedata
from dataclasses import dataclass
from typing import Any

import mcp.types as types

from apps_runtime.routes import CONFIRM_SETTING
from mcp_gateway.tools.catalog.catalog import CatalogEntry
from mcp_gateway.tools.pipeline.asks import Asked
from mcp_gateway.tools.pipeline.results import error_result
from tenants.models import Tenant

SETTING = CONFIRM_SETTING  # the front-end path refuses these tools' routes while it is on
# The form's one field: a yes/no the client renders; accepting with it unticked is a no.
FIELD = "confirm"
REQUESTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        FIELD: {
            "type": "boolean",
            "title": "Run it",
            "description": "Accept to run the tool with these arguments; decline and nothing runs.",
            "default": True,
        }
    },
    "required": [FIELD],
}

TITLE_MAX = 100
KEY_MAX = 40
VALUE_MAX = 120
ARGUMENTS_SHOWN = 10
MESSAGE_MAX = 2000
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


class Verdict(enum.Enum):
    ACCEPTED = "accepted"
    DECLINED = "declined"
    CANCELLED = "cancelled"  # dismissed, or not answered in time
    NO_CAPABILITY = "no_capability"  # the client did not declare form elicitation
    NO_STREAM = "no_stream"  # the client could answer, but this connection cannot carry the question
    NOT_ASKED = "not_asked"  # the tenant switched confirmations off


@dataclass(frozen=True)
class Confirmation:
    """What came of asking (or not asking) the user about one call."""

    verdict: Verdict

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED

    @property
    def lets_run(self) -> bool:
        return self.verdict in (Verdict.ACCEPTED, Verdict.NOT_ASKED)


# A task is created only once its tools/call was confirmed (or needed no confirmation): its run,
# later and with nobody to ask, goes ahead on that yes.
CONFIRMED_AT_CREATION = Confirmation(Verdict.ACCEPTED)


def needs_confirmation(tenant: Tenant, entry: CatalogEntry) -> bool:
    """Whether calls of ``entry`` wait for the user: a ``confirm`` tool, and the tenant's setting on."""
    return entry.confirm and tenant.switch(SETTING)


def confirmed(entry: CatalogEntry, confirmation: Confirmation | None) -> bool:
    """Whether the user said yes to running this call of a ``confirm`` tool (its audit says ``confirmed``)."""
    return entry.confirm and confirmation is not None and confirmation.accepted


def verdict_of(answer: types.ElicitResult) -> Verdict:
    if answer.action == "accept":
        # Accepting the form with the box unticked is a no; a client that sends no content
        # accepted a form whose only field defaults to yes.
        return Verdict.ACCEPTED if (answer.content or {}).get(FIELD, True) is True else Verdict.DECLINED
    return Verdict.DECLINED if answer.action == "decline" else Verdict.CANCELLED


def refusal(
    tenant: Tenant, entry: CatalogEntry, confirmation: Confirmation | None
) -> types.CallToolResult | None:
    """The error result of a call that may not run for want of the user's yes, or None when it may.

    No confirmation at all (the tool became a ``confirm`` tool between asking and running) refuses:
    a confirm tool never runs unasked while the setting is on.
    """
    if not needs_confirmation(tenant, entry) or (confirmation is not None and confirmation.lets_run):
        return None
    name = _shown(entry.tool.title or entry.wire_name, TITLE_MAX)
    verdict = confirmation.verdict if confirmation is not None else None
    if verdict is Verdict.DECLINED:
        text = f"The user declined: {name} did not run."
    elif verdict is Verdict.CANCELLED:
        text = f"The user cancelled the confirmation or did not answer in time: {name} did not run."
    elif verdict is Verdict.NO_CAPABILITY:
        text = (
            f"{name} needs the user's confirmation before it runs, and this client cannot ask for it "
            "(it did not declare the elicitation capability, form mode). Nothing ran; use a client "
            "that supports elicitation."
        )
    elif verdict is Verdict.NO_STREAM:
        text = (
            f"{name} needs the user's confirmation before it runs, and this connection cannot carry "
            "the question (no stream for this request). Nothing ran."
        )
    else:
        text = f"{name} now needs the user's confirmation before it runs. Nothing ran; call it again."
    return error_result(text)


def confirmation_asked(entry: CatalogEntry, arguments: dict[str, Any]) -> Asked:
    """The question whether the user lets this call run: one form, its one field ``FIELD``."""
    params = types.ElicitRequestFormParams(
        message=confirmation_message(entry, arguments), requested_schema=REQUESTED_SCHEMA
    )
    return Asked({FIELD: types.ElicitRequest(params=params)}, confirms=True)


def confirmation_message(entry: CatalogEntry, arguments: dict[str, Any]) -> str:
    """The question put to the user: the tool, then each argument as JSON, all bounded."""
    title = _shown(entry.tool.title or entry.wire_name, TITLE_MAX)
    lines = [f"Run {title} ({entry.wire_name})?"]
    if arguments:
        lines.append("With these arguments:")
    for key, value in list(arguments.items())[:ARGUMENTS_SHOWN]:
        lines.append(f"  {_shown(key, KEY_MAX)}: {_shown(value, VALUE_MAX)}")
    if len(arguments) > ARGUMENTS_SHOWN:
        lines.append(f"  ...and {len(arguments) - ARGUMENTS_SHOWN} more")
    lines.append("Nothing runs unless you accept.")
    message = "\n".join(lines)
    return message if len(message) <= MESSAGE_MAX else message[: MESSAGE_MAX - 1] + "…"


def _shown(value: Any, limit: int) -> str:
    """``value`` as JSON on one line, invisible and line-breaking characters escaped, at most ``limit``."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    shown = "".join(_escaped(ch) for ch in text[:limit])  # only what can be shown: values may be huge
    if len(text) <= limit and len(shown) <= limit:
        return shown
    return f"{shown[: limit - 16]}… ({len(text)} chars)"


def _escaped(ch: str) -> str:
    if unicodedata.category(ch) not in _ESCAPED_CATEGORIES:
        return ch
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
