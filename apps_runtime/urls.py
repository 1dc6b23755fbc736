from django.urls import re_path

from apps_runtime import views

urlpatterns = [
    re_path(
        r"^t/(?P<tenant_slug>[a-z0-9-]+)/apps/(?P<app_name>[a-z][a-z0-9_]*)/(?P<route_path>.*)$",
        views.app_route,
        name="app-route",
    ),
]
