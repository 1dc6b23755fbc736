from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from lowcode_platform.health import healthz
from lowcode_platform.metrics import metrics_view
from mcp_gateway.consent import GatewayConsentView
from oauth import urls as oauth_urls

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("tenants.api.urls")),
    path("api/", include("apps_runtime.api.urls")),
    path("api/", include("mcp_gateway.api.urls")),
    path("api/", include("oauth.api.urls")),
    path("api/", include("agents.api.urls")),
    # OAuth 2.1 for MCP clients. The toolkit reverses its endpoints in the "oauth2_provider"
    # namespace; the authorization endpoint is the gateway's consent page (it shows its catalog).
    path(
        "",
        include(
            (
                [
                    path("oauth/authorize/", GatewayConsentView.as_view(), name="authorize"),
                    *oauth_urls.protocol_urlpatterns,
                ],
                "oauth2_provider",
            )
        ),
    ),
    path("console/", include("console.urls")),
    path("", include("oauth.urls")),
    path("", include("mcp_gateway.screen_host.urls")),  # before the apps' own routes
    path("", include("apps_runtime.urls")),
]

handler500 = "lowcode_platform.api_errors.server_error"
