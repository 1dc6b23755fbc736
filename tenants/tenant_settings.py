"""The tenant settings a tenant admin may toggle, with their defaults.

Stored as a JSON object on the tenant, so adding a setting needs no migration; unknown keys are
refused, so a typo can never silently leave a switch in its default state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tenants.exceptions import InvalidValue, UnknownSetting


@dataclass(frozen=True)
class SettingSpec:
    key: str
    default: bool
    help: str


SETTINGS: dict[str, SettingSpec] = {
    spec.key: spec
    for spec in (
        SettingSpec("mcpServer", True, "Serve the tenant's MCP endpoint at /t/<tenant>/mcp."),
        SettingSpec(
            "customAppsMcpTools", True, "Offer the tools of deployed apps over MCP (built-in tools stay)."
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


def clean_setting_value(key: str, value: object) -> bool:
    """The value to store for ``key``: the one rule for every edge, a JSON boolean and nothing else.

    ``"yes"``, ``"on"``, ``0`` and the like are refused, so the API, the admin and the command agree.

    Raises:
        UnknownSetting: the key is not a tenant setting.
        InvalidValue: the value is not a boolean.
    """
    setting_spec(key)
    if isinstance(value, bool):
        return value
    raise InvalidValue(key, value, "use true or false")


def parse_setting_text(key: str, text: str) -> bool:
    """A value typed on a command line: the JSON literal ``true`` or ``false``, then ``clean_setting_value``.

    Raises:
        UnknownSetting: the key is not a tenant setting.
        InvalidValue: the text is not ``true`` or ``false``.
    """
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if not isinstance(value, bool):
        value = text  # name the text as typed, not what JSON made of it
    return clean_setting_value(key, value)


def effective_settings(stored: dict) -> dict[str, bool]:
    """Every known setting with its stored value or its default, in a fixed order."""
    return {key: bool(stored.get(key, spec.default)) for key, spec in sorted(SETTINGS.items())}
