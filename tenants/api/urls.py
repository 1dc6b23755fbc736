from django.urls import path

from tenants.api import audit_views, views

urlpatterns = [
    path("tenants/<str:slug>/settings", views.TenantSettingsView.as_view(), name="tenant-settings"),
    path("tenants/<str:slug>/members", views.MemberListView.as_view(), name="tenant-members"),
    path("tenants/<str:slug>/members/<str:username>", views.MemberDetailView.as_view(), name="tenant-member"),
    path("tenants/<str:slug>/tokens", views.TokenListView.as_view(), name="tenant-tokens"),
    path("tenants/<str:slug>/tokens/<int:token_id>", views.TokenDetailView.as_view(), name="tenant-token"),
    path("tenants/<str:slug>/audit/changes", audit_views.ChangeListView.as_view(), name="tenant-changes"),
    path(
        "tenants/<str:slug>/audit/changes/export",
        audit_views.ChangeExportView.as_view(),
        name="tenant-changes-export",
    ),
]
