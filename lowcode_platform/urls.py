from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from lowcode_platform.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("tenants.api.urls")),
    path("api/", include("apps_runtime.api.urls")),
    path("api/", include("mcp_gateway.api.urls")),
    path("", include("apps_runtime.urls")),
]
