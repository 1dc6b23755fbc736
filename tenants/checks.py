"""System checks for the platform settings the tenants package relies on."""

from django.conf import settings
from django.core.checks import Error, register


@register()
def check_platform_settings(app_configs, **kwargs) -> list[Error]:
    errors = []
    limit = settings.MCP_WIRE_NAME_LIMIT
    # Prefix (20) + "_" + app (40) + "_" + tool (40) can exceed any limit; below 24 the hashed form
    # (limit - 9 characters of name) would keep too little of the name to be readable.
    if not isinstance(limit, int) or not 24 <= limit <= 128:
        errors.append(Error("MCP_WIRE_NAME_LIMIT must be an integer from 24 to 128", id="platform.E001"))
    if not isinstance(settings.MCP_PAGE_SIZE, int) or settings.MCP_PAGE_SIZE < 1:
        errors.append(Error("MCP_PAGE_SIZE must be a positive integer", id="platform.E002"))
    if settings.SANDBOX_MIN_TIMEOUT_MS > settings.SANDBOX_MAX_TIMEOUT_MS:
        errors.append(Error("SANDBOX_MAX_TIMEOUT_MS is below the minimum of 100", id="platform.E003"))
    return errors
