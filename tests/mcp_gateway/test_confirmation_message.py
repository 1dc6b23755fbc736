"""The question put to the user, built from untrusted text: one line per argument, bounded, nothing hidden."""

from __future__ import annotations

import mcp.types as types
import pytest

from mcp_gateway.tools.call.confirmation import (
    ARGUMENTS_SHOWN,
    MESSAGE_MAX,
    VALUE_MAX,
    Verdict,
    confirmation_message,
    verdict_of,
)
from mcp_gateway.tools.catalog.catalog import CatalogEntry


def entry(title: str | None = "Wipe an account") -> CatalogEntry:
    tool = types.Tool(name="acme_ledger_wipe", title=title, description="d", input_schema={"type": "object"})
    return CatalogEntry(wire_name="acme_ledger_wipe", tool=tool, read_only=False, confirm=True)


def test_the_message_names_the_tool_and_shows_each_argument_as_json():
    message = confirmation_message(entry(), {"account": "acct-1", "limit": 3, "tags": ["a"]})

    assert message.splitlines() == [
        'Run "Wipe an account" (acme_ledger_wipe)?',
        "With these arguments:",
        '  "account": "acct-1"',
        '  "limit": 3',
        '  "tags": ["a"]',
        "Nothing runs unless you accept.",
    ]


def test_a_tool_without_a_title_is_named_by_its_wire_name():
    assert confirmation_message(entry(title=None), {}).splitlines()[0] == (
        'Run "acme_ledger_wipe" (acme_ledger_wipe)?'
    )


@pytest.mark.parametrize(
    "sneaky",
    [
        "x\nNothing runs unless you accept.\nThis call is safe",  # a line of its own
        "x\u2028safe",  # line separator
        "x\u202esafe",  # right-to-left override
        "x\u200b\u2066safe",  # zero-width space, isolate
        "x\x1b[2Ksafe",  # terminal escape
    ],
)
def test_no_argument_or_title_can_break_a_line_or_hide_text(sneaky):
    message = confirmation_message(entry(title=sneaky), {sneaky: sneaky})

    assert message.count("\n") == 3  # the tool, "With these arguments:", the argument, the footer
    assert not any(hidden in message for hidden in ("\u2028", "\u202e", "\u200b", "\u2066", "\x1b"))


def test_hidden_characters_are_shown_escaped_not_dropped():
    message = confirmation_message(entry(), {"account": "acct\u202e1\u200b"})

    assert '"account": "acct\\u202e1\\u200b"' in message


def test_long_values_and_many_arguments_are_cut_and_say_so():
    arguments = {f"arg{i:02}": "v" * 10_000 for i in range(ARGUMENTS_SHOWN + 5)}

    message = confirmation_message(entry(title="T" * 5000), arguments)

    lines = message.splitlines()
    assert len(message) <= MESSAGE_MAX
    assert lines[-2] == "  ...and 5 more" and lines[-1] == "Nothing runs unless you accept."
    value_line = lines[2]
    assert value_line.endswith("(10002 chars)") and len(value_line) <= len('  "arg00": ') + VALUE_MAX


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        (types.ElicitResult(action="accept", content={"confirm": True}), Verdict.ACCEPTED),
        (types.ElicitResult(action="accept"), Verdict.ACCEPTED),  # the form's one field defaults to yes
        (types.ElicitResult(action="accept", content={"confirm": False}), Verdict.DECLINED),
        (types.ElicitResult(action="accept", content={"confirm": "yes"}), Verdict.DECLINED),
        (types.ElicitResult(action="decline"), Verdict.DECLINED),
        (types.ElicitResult(action="cancel"), Verdict.CANCELLED),
    ],
)
def test_only_an_accept_with_the_box_ticked_or_untouched_is_a_yes(answer, verdict):
    assert verdict_of(answer) is verdict
