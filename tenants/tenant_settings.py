"""The tenant settings a tenant admin may change, with their defaults.

Stored as a JSON object on the tenant, so adding a setting needs no migration; unknown keys are
refused, so a typo can never silently leave a setting at its default. A setting is a switch (a JSON
boolean), a bounded integer, one of a few words (a choice), or a JSON object checked by a rule of its
own (``null`` when unset); each spec's ``clean`` is the one rule every edge goes through.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from tenants.exceptions import InvalidValue, UnknownSetting
from tenants.rate_limit_rule import EXAMPLE, rate_limit_messages

SettingValue = bool | int | str | dict | None


@dataclass(frozen=True)
class SettingSpec:
    key: str
    default: SettingValue
    help: str
    # Integer settings only: the accepted range, both ends included.
    minimum: int | None = None
    maximum: int | None = None
    # Object settings only: what is wrong with a value (nothing when it is valid).
    object_problems: Callable[[object], list[str]] | None = None
    # Choice settings only: the words accepted (the default is one of them).
    choices: tuple[str, ...] | None = None

    @property
    def is_switch(self) -> bool:
        return isinstance(self.default, bool)

    @property
    def is_object(self) -> bool:
        return self.object_problems is not None

    @property
    def is_choice(self) -> bool:
        return self.choices is not None

    def clean(self, value: object) -> SettingValue:
        """``value`` if it is a JSON boolean (a switch), an integer in range or one of the choices;
        else ``InvalidValue``.

        ``"yes"``, ``"on"``, ``0`` for a switch, ``"5"`` or ``5.0`` for an integer and ``"Search"`` for
        a choice are refused, so the API, the admin, the console and the command agree.
        """
        if self.object_problems is not None:
            problems = self.object_problems(value) if value is not None else []
            if not problems:
                return cast(dict | None, value)  # the rule accepted it: a JSON object
            raise InvalidValue(self.key, value, "; ".join(problems) + "; or null for none")
        if self.choices is not None:
            if isinstance(value, str) and value in self.choices:
                return value
        elif self.is_switch:
            if isinstance(value, bool):
                return value
        elif isinstance(value, int) and not isinstance(value, bool) and self._in_range(value):
            return value
        raise InvalidValue(self.key, value, self.rule)

    def _in_range(self, value: int) -> bool:
        return self.minimum is not None and self.maximum is not None and self.minimum <= value <= self.maximum

    @property
    def rule(self) -> str:
        if self.is_object:
            return "use a JSON object as the setting's help shows, or null for none"
        if self.choices is not None:
            return "use one of " + ", ".join(self.choices)
        return (
            "use true or false" if self.is_switch else f"use an integer from {self.minimum} to {self.maximum}"
        )


SETTINGS: dict[str, SettingSpec] = {
    spec.key: spec
    for spec in (
        SettingSpec("mcpServer", True, "Serve the tenant's MCP endpoint at /t/<tenant>/mcp."),
        SettingSpec(
            "customAppsMcpTools", True, "Offer the tools of deployed apps over MCP (built-in tools stay)."
        ),
        SettingSpec(
            "toolRateLimit",
            None,
            "Rate limit of every MCP tool without its own rateLimit, built-in tools included, e.g. "
            f"{EXAMPLE}; null: none.",
            object_problems=rate_limit_messages,
        ),
        SettingSpec(
            "maxOutputTokens",
            20_000,
            "Output budget of a tool result in estimated tokens, for tools without their own "
            "maxOutputTokens; a longer list is cut at an item boundary, anything else is an error.",
            minimum=100,
            maximum=1_000_000,
        ),
        SettingSpec(
            "agentRunsPerDay",
            100,
            "Runs of the tenant's AI agents that may start in one UTC day; past it a new run is refused.",
            minimum=0,
            maximum=1_000_000,
        ),
        SettingSpec(
            "agentTokensPerDay",
            1_000_000,
            "Model tokens the tenant's AI agents may use in one UTC day; once spent, new runs are refused.",
            minimum=0,
            maximum=1_000_000_000,
        ),
        SettingSpec(
            "confirmDestructiveTools",
            True,
            "Ask the user before tools marked confirm run; off, they run without asking.",
        ),
        SettingSpec(
            "toolDiscovery",
            "list",
            "How MCP clients find app tools. list: tools/list offers every tool the caller may use, "
            "plus search_tools. search: tools/list offers the built-in tools, search_tools and the tools "
            "an app pins; the model finds the others with search_tools. code: as search, for a model "
            "that composes tools with run_code (docs/code-mode.md). Every tool stays callable by name.",
            choices=("list", "search", "code"),
        ),
        SettingSpec(
            "codeMode",
            True,
            "Offer the built-in run_code tool: a model composes the caller's own tools in one "
            "sandboxed Python script (docs/code-mode.md).",
        ),
    )
}


def setting_spec(key: str) -> SettingSpec:
    """The spec of a known setting.

    Raises:
        UnknownSetting: the key is not a tenant setting.
    """
    try:
        return SETTINGS[key]
    except KeyError as err:
        raise UnknownSetting(key, sorted(SETTINGS)) from err


def clean_setting_value(key: str, value: object) -> SettingValue:
    """The value to store for ``key``: the one rule for every edge (see ``SettingSpec.clean``).

    Raises:
        UnknownSetting: the key is not a tenant setting.
        InvalidValue: the value breaks the setting's rule.
    """
    return setting_spec(key).clean(value)


def parse_setting_text(key: str, text: str) -> SettingValue:
    """A value typed on a command line or a form: a JSON literal (``true``, ``20000``), then the rule.

    Raises:
        UnknownSetting: the key is not a tenant setting.
        InvalidValue: the text is not a value the setting accepts.
    """
    spec = setting_spec(key)
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    try:
        return spec.clean(value)
    except InvalidValue as err:
        # Name the text as typed, not what JSON made of it.
        raise InvalidValue(key, text, err.rule) from None


def setting_text(value: SettingValue) -> str:
    """A value as the command prints it and ``parse_setting_text`` reads it back: JSON, but a choice's
    word as it is (``search``, not ``"search"``)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "), sort_keys=True)


def effective_settings(stored: dict) -> dict[str, SettingValue]:
    """Every known setting with its stored value or its default, in a fixed order."""
    return {key: stored.get(key, spec.default) for key, spec in sorted(SETTINGS.items())}
