from django.urls import path

from agents.api import views

PREFIX = "tenants/<str:slug>/"
RUN = PREFIX + "agents/<str:name>/runs/<str:run_id>"

urlpatterns = [
    path(PREFIX + "agents", views.AgentListView.as_view(), name="agents"),
    path(PREFIX + "agents/<str:name>", views.AgentDetailView.as_view(), name="agent"),
    path(PREFIX + "agent-providers", views.ProviderListView.as_view(), name="agent-providers"),
    path(
        PREFIX + "agent-providers/<str:provider>/key",
        views.ProviderKeyView.as_view(),
        name="agent-provider-key",
    ),
    path(PREFIX + "agents/<str:name>/runs", views.RunListView.as_view(), name="agent-runs"),
    path(RUN, views.RunDetailView.as_view(), name="agent-run"),
    path(RUN + "/events", views.RunEventsView.as_view(), name="agent-run-events"),
    path(RUN + "/cancel", views.RunCancelView.as_view(), name="agent-run-cancel"),
    path(RUN + "/approvals/<int:step>", views.RunApprovalView.as_view(), name="agent-run-approval"),
]
