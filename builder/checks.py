"""System check of the setting the builder endpoint reads."""

from __future__ import annotations

from django.core.checks import Error, register

from core.setting_bounds import Bound, bound_errors

BOUNDS = {
    # Builder tool calls of one tenant running at once (validate and deploy compile handler code).
    "BUILDER_CALLS_PER_TENANT": Bound(int, 1, 64),
}


@register()
def check_builder_settings(app_configs, **kwargs) -> list[Error]:
    return bound_errors(BOUNDS, "builder.E001")
