"""System checks for the agents' settings: the provider list, and the numeric bounds."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from agents.conf import GROUPS
from agents.providers import endpoint_problems
from core.setting_bounds import group_errors


@register()
def check_agent_settings(app_configs: Any, **kwargs: Any) -> list[Error]:
    errors = group_errors(GROUPS, "agents.E001")
    providers = settings.AGENT_PROVIDERS
    if not isinstance(providers, dict):
        return [
            *errors,
            Error("AGENT_PROVIDERS must be a JSON object: name -> {kind, base_url}", id="agents.E002"),
        ]
    for name, spec in providers.items():
        errors.extend(
            Error(f"AGENT_PROVIDERS {problem}", id="agents.E002") for problem in endpoint_problems(name, spec)
        )
    return errors
