from django.urls import path

from apps_runtime.api import views

urlpatterns = [
    path("schema/manifest.json", views.manifest_schema, name="manifest-schema"),
    path("tenants/<str:slug>/apps", views.AppListView.as_view(), name="tenant-apps"),
    path("tenants/<str:slug>/apps/validate", views.AppValidateView.as_view(), name="app-validate"),
    path("tenants/<str:slug>/apps/<str:app>/rollback", views.AppRollbackView.as_view(), name="app-rollback"),
    path(
        "tenants/<str:slug>/apps/<str:app>/versions", views.AppVersionListView.as_view(), name="app-versions"
    ),
    path("tenants/<str:slug>/errors", views.HandlerErrorListView.as_view(), name="handler-errors"),
    path("tenants/<str:slug>/errors/<str:error_id>", views.HandlerErrorView.as_view(), name="handler-error"),
    path("tenants/<str:slug>/logs", views.CallLogListView.as_view(), name="call-logs"),
    path("tenants/<str:slug>/runs", views.JobRunListView.as_view(), name="job-runs"),
    path("tenants/<str:slug>/runs/<str:run_id>", views.JobRunDetailView.as_view(), name="job-run"),
    path("tenants/<str:slug>/secrets", views.SecretListView.as_view(), name="tenant-secrets"),
    path("tenants/<str:slug>/secrets/<str:name>", views.SecretView.as_view(), name="tenant-secret"),
    path(
        "tenants/<str:slug>/service-accounts", views.ServiceAccountListView.as_view(), name="service-accounts"
    ),
    path(
        "tenants/<str:slug>/service-accounts/<str:provider>",
        views.ServiceAccountView.as_view(),
        name="service-account",
    ),
    path(
        "tenants/<str:slug>/service-accounts/<str:provider>/connect",
        views.ServiceAccountConnectView.as_view(),
        name="service-account-connect",
    ),
    path("tenants/<str:slug>/audit/outbound", views.OutboundAuditView.as_view(), name="outbound-audit"),
]
