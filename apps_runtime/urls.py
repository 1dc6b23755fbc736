from django.urls import re_path

from apps_runtime import views
from apps_runtime.screens import SDK_VERSION

urlpatterns = [
    re_path(
        r"^_lcp/ext-apps/" + SDK_VERSION.replace(".", r"\.") + r"/app-with-deps\.js$", views.ext_apps_sdk
    ),
    re_path(
        r"^t/(?P<tenant_slug>[a-z0-9-]+)/apps/(?P<app_name>[a-z][a-z0-9_]*)/_screens/(?P<screen_name>[a-z0-9_]{1,40})/document$",
        views.screen_document,
        name="screen-document",
    ),
    re_path(
        r"^t/(?P<tenant_slug>[a-z0-9-]+)/apps/(?P<app_name>[a-z][a-z0-9_]*)/(?P<route_path>.*)$",
        views.app_route,
        name="app-route",
    ),
]
