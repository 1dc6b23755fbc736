from django.contrib import admin

from agents.models import Agent, AgentRun
from tenants.admin import ReadOnlyAdmin


@admin.register(Agent)
class AgentAdmin(ReadOnlyAdmin):
    """Agents, for operators: tenant admins define them through the API and the console (validated there)."""

    list_display = [
        "name",
        "tenant",
        "provider",
        "model",
        "run_as",
        "runners",
        "max_steps",
        "max_tokens",
        "updated_at",
    ]
    list_filter = ["tenant", "provider", "run_as"]
    search_fields = ["name"]


@admin.register(AgentRun)
class AgentRunAdmin(ReadOnlyAdmin):
    """Agent runs, for operators: their state and usage; the messages are the members' and not shown."""

    list_display = [
        "run_id",
        "tenant",
        "agent",
        "user",
        "status",
        "total_tokens",
        "created_at",
        "finished_at",
    ]
    list_filter = ["tenant", "status"]
    search_fields = ["run_id"]
    exclude = ["messages", "input", "output"]
