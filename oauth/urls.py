"""Routes of the authorization server.

``protocol_urlpatterns`` go in the toolkit's ``oauth2_provider`` namespace (it reverses its own
endpoints there), together with the authorization endpoint, which the project's URLconf takes
from the gateway (``mcp_gateway.consent``); ``urlpatterns`` are the rest.
"""

from django.contrib.auth import views as auth_views
from django.urls import path, re_path
from oauth2_provider import views as toolkit

from oauth import views

protocol_urlpatterns = [
    path("oauth/token/", toolkit.TokenView.as_view(), name="token"),
    path("oauth/revoke/", toolkit.RevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/register/", views.RegistrationView.as_view(), name="dcr-register"),
    path(
        "oauth/register/<str:client_id>/",
        views.RegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
]

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        views.authorization_server_metadata,
        name="oauth-server-metadata",
    ),
    re_path(r"^\.well-known/openid-configuration/?$", views.authorization_server_metadata),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/", views.signed_in, name="signed-in"),
]
