"""System checks for the authorization server's settings."""

from django.conf import settings
from django.core.checks import Error, Warning, register

from core.setting_bounds import Bound, bound_errors

BOUNDS = {
    "OAUTH_REGISTRATION_MAX_BYTES": Bound(int, 1024),
    "OAUTH_CLIENT_MAX_REDIRECT_URIS": Bound(int, 1),
    "OAUTH_REDIRECT_URI_MAX_LENGTH": Bound(int, 20),
    "OAUTH_REGISTRATIONS_PER_HOUR": Bound(int, 1),
    "OAUTH_UNUSED_CLIENT_HOURS": Bound(int, 1),
    "OAUTH_CIMD_FETCHES_PER_HOST": Bound(int, 1),
    "LOGIN_FAILURES_PER_USERNAME": Bound(int, 1),
    "LOGIN_FAILURES_PER_SOURCE": Bound(int, 1),
    "LOGIN_FAILURES_PER_SOURCE_AND_USERNAME": Bound(int, 1),
    "LOGIN_FAILURE_WINDOW_SECONDS": Bound(int, 1),
}

# The checks that matter only where the platform faces clients: `check --deploy` and `serve` (which
# runs them once at start) report them; other commands stay quiet about them.
PUBLIC_ORIGIN_TAG = "public_origin"


@register()
def check_oauth_settings(app_configs, **kwargs) -> list:
    errors = bound_errors(BOUNDS, "oauth.E002")
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
