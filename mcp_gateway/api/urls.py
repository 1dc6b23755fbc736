from django.urls import path

from mcp_gateway.api import views

urlpatterns = [
    path("tenants/<str:slug>/audit", views.ToolCallAuditView.as_view(), name="tenant-audit"),
    path("tenants/<str:slug>/audit/export", views.ToolCallExportView.as_view(), name="tenant-audit-export"),
    path("tenants/<str:slug>/tools/preview", views.ToolPreviewView.as_view(), name="tool-preview"),
    path("tenants/<str:slug>/approvals", views.ApprovalListView.as_view(), name="approval-list"),
    path("tenants/<str:slug>/approvals/<str:approval_id>", views.ApprovalView.as_view(), name="approval"),
]
