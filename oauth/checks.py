"""System checks for the authorization server's settings."""

from django.conf import settings
from django.core.checks import Error, Warning, register


@register()
def check_oauth_settings(app_configs, **kwargs) -> list:
    problems = []
    base = settings.PUBLIC_BASE_URL
    if base and (not base.startswith(("https://", "http://")) or base.endswith("/") or base.count("/") > 2):
        problems.append(
            Error("PUBLIC_BASE_URL must be an origin such as https://platform.example", id="oauth.E001")
        )
    if not base and not settings.DEBUG:
        problems.append(
            Warning(
                "PUBLIC_BASE_URL is not set: MCP clients cannot use OAuth (static tokens still work)",
                hint="Set PUBLIC_BASE_URL to the https origin clients reach the platform at.",
                id="oauth.W001",
            )
        )
    if base.startswith("http://") and not settings.DEBUG:
        problems.append(Warning("PUBLIC_BASE_URL should be https outside DEBUG", id="oauth.W002"))
    return problems
