from django.urls import path

from console.views import activity, agents, apps, connect, connections, home, members, settings, tokens, tools

app_name = "console"

urlpatterns = [
    path("", home.index, name="index"),
    path("<str:slug>/", home.tenant_home, name="tenant"),
    path("<str:slug>/apps/", apps.apps, name="apps"),
    path("<str:slug>/apps/deploy", apps.deploy, name="deploy"),
    path("<str:slug>/apps/<str:app>/rollback", apps.rollback, name="rollback"),
    path("<str:slug>/apps/<str:app>/undeploy", apps.undeploy, name="undeploy"),
    path("<str:slug>/tools/", tools.tools, name="tools"),
    path("<str:slug>/preview/", tools.preview_as, name="preview"),
    path("<str:slug>/settings/", settings.settings_page, name="settings"),
    path("<str:slug>/settings/set", settings.set_setting, name="set-setting"),
    path("<str:slug>/members/", members.members, name="members"),
    path("<str:slug>/members/add", members.add_member, name="add-member"),
    path("<str:slug>/members/<str:username>/update", members.update_member, name="update-member"),
    path("<str:slug>/members/<str:username>/remove", members.remove_member, name="remove-member"),
    path("<str:slug>/tokens/", tokens.tokens, name="tokens"),
    path("<str:slug>/tokens/issue", tokens.issue_token, name="issue-token"),
    path("<str:slug>/tokens/<int:token_id>/revoke", tokens.revoke_token, name="revoke-token"),
    path("<str:slug>/connections/", connections.connections, name="connections"),
    path("<str:slug>/connections/<int:connection_id>/revoke", connections.revoke, name="revoke-connection"),
    path("<str:slug>/audit/", activity.audit, name="audit"),
    path("<str:slug>/errors/", activity.errors, name="errors"),
    path("<str:slug>/errors/<str:error_id>", activity.error_detail, name="error"),
    path("<str:slug>/runs/", activity.runs, name="runs"),
    path("<str:slug>/runs/<str:run_id>", activity.run_detail, name="run"),
    path("<str:slug>/connect/", connect.connect, name="connect"),
    path("<str:slug>/agents/", agents.agents, name="agents"),
    path("<str:slug>/agents/create", agents.create_agent, name="create-agent"),
    path("<str:slug>/agents/provider-key", agents.set_provider_key, name="set-provider-key"),
    path("<str:slug>/agents/<str:name>/", agents.agent, name="agent"),
    path("<str:slug>/agents/<str:name>/runs/<str:run_id>", agents.agent_run, name="agent-run"),
    path("<str:slug>/agents/<str:name>/runs/<str:run_id>/cancel", agents.cancel, name="agent-run-cancel"),
    path(
        "<str:slug>/agents/<str:name>/runs/<str:run_id>/approvals/<int:step>",
        agents.decide,
        name="agent-run-decide",
    ),
]
