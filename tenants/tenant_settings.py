"""The tenant settings a tenant admin may toggle, with their defaults.

Stored as a JSON object on the tenant, so adding a setting needs no migration; unknown keys are
refused, so a typo can never silently leave a switch in its default state.
"""

from __future__ import annotations

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
    """The value to store for ``key``; accepts booleans and the strings true/false.

    Raises:
        UnknownSetting: the key is not a tenant setting.
        InvalidValue: the value is not a boolean.
    """
    setting_spec(key)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise InvalidValue(key, value, "use true or false")


def effective_settings(stored: dict) -> dict[str, bool]:
    """Every known setting with its stored value or its default, in a fixed order."""
    return {key: bool(stored.get(key, spec.default)) for key, spec in sorted(SETTINGS.items())}
