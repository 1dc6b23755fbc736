from django.urls import re_path

from mcp_gateway.screen_host import views

SCREEN = (
    r"^t/(?P<tenant_slug>[a-z0-9-]+)/apps/(?P<app_name>[a-z][a-z0-9_]*)"
    r"/_screens/(?P<screen_name>[a-z0-9_]{1,40})"
)

urlpatterns = [
    re_path(SCREEN + r"$", views.screen_host, name="app-screen"),
    re_path(SCREEN + r"/tools/call$", views.tools_call, name="app-screen-tools-call"),
]
