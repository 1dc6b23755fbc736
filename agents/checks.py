"""System checks for the agents' settings: the provider list, and the numeric bounds."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register

from agents.providers import endpoint_problems
from core.setting_bounds import Bound, bound_errors

BOUNDS = {
    "AGENT_RUN_IN_PROCESS_WORKERS": Bound(int, 1),
    "AGENT_RUN_TENANT_SHARE": Bound(int, 1),
    "AGENT_RUN_GRACE_SECONDS": Bound(int, 0),
    "AGENT_RUN_RESEND_SECONDS": Bound(int, 0),
    "AGENT_CANCEL_POLL_SECONDS": Bound(float, 0.01),
    "AGENT_EVENTS_POLL_SECONDS": Bound(float, 0.01),
    "AGENT_EVENTS_MAX_SECONDS": Bound(float, 1),
    "RETENTION_AGENT_RUN_DAYS": Bound(float, 0.01),
}


@register()
def check_agent_settings(app_configs, **kwargs) -> list[Error]:
    errors = bound_errors(BOUNDS, "agents.E001")
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
