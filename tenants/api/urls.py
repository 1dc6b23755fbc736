from django.urls import path

from tenants.api import views

urlpatterns = [
    path("tenants/<str:slug>/settings", views.TenantSettingsView.as_view(), name="tenant-settings"),
    path("tenants/<str:slug>/members", views.MemberListView.as_view(), name="tenant-members"),
    path("tenants/<str:slug>/members/<str:username>", views.MemberDetailView.as_view(), name="tenant-member"),
    path("tenants/<str:slug>/tokens", views.TokenListView.as_view(), name="tenant-tokens"),
    path("tenants/<str:slug>/tokens/<int:token_id>", views.TokenDetailView.as_view(), name="tenant-token"),
]
