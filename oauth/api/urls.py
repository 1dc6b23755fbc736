from django.urls import path

from oauth.api import views

urlpatterns = [
    path("tenants/<str:slug>/connections", views.ConnectionListView.as_view(), name="tenant-connections"),
    path(
        "tenants/<str:slug>/connections/<int:connection_id>",
        views.ConnectionDetailView.as_view(),
        name="tenant-connection",
    ),
]
