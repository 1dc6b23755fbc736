"""OpenAPI for the bearer-token authenticator: the schema names the scheme instead of warning."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """``Authorization: Bearer lcp_...``: a tenant API token (``issue_token``, the API, the console)."""

    target_class = "tenants.api.authentication.BearerTokenAuthentication"
    name = "bearerToken"

    def get_security_definition(self, auto_schema: Any) -> dict:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A tenant API token, lcp_...; it works only in the tenant it was issued for.",
        }
