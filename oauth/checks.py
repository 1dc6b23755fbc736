"""System checks for the authorization server's settings."""

from django.conf import settings
from django.core.checks import Error, Warning, register

from core.setting_bounds import group_errors
from oauth.conf import GROUPS

# The checks that matter only where the platform faces clients: `check --deploy` and `serve` (which
# runs them once at start) report them; other commands stay quiet about them.
PUBLIC_ORIGIN_TAG = "public_origin"


@register()
def check_oauth_settings(app_configs, **kwargs) -> list:
    errors = group_errors(GROUPS, "oauth.E002")
    base = settings.PUBLIC_BASE_URL
    if base and (not base.startswith(("https://", "http://")) or base.endswith("/") or base.count("/") > 2):
        errors.append(
            Error("PUBLIC_BASE_URL must be an origin such as https://platform.example", id="oauth.E001")
        )
    return errors


@register(PUBLIC_ORIGIN_TAG, deploy=True)
def check_public_origin(app_configs, **kwargs) -> list:
    if settings.DEBUG:
        return []
    base = settings.PUBLIC_BASE_URL
    if not base:
        return [
            Warning(
                "PUBLIC_BASE_URL is not set: MCP clients cannot use OAuth (static tokens still work)",
                hint="Set PUBLIC_BASE_URL to the https origin clients reach the platform at.",
                id="oauth.W001",
            )
        ]
    if base.startswith("http://"):
        return [Warning("PUBLIC_BASE_URL should be https outside DEBUG", id="oauth.W002")]
    return []
