"""System checks for the platform-wide settings: the bounds ``conf.py`` declares with them."""

from __future__ import annotations

from django.core.checks import Error, register

from core.setting_bounds import group_errors
from lowcode_platform.conf import GROUPS


@register()
def check_platform_settings(app_configs, **kwargs) -> list[Error]:
    return group_errors(GROUPS, "lowcode_platform.E001")
