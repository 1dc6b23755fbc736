from django.apps import AppConfig


class AgentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agents"
    verbose_name = "Tenant agents"

    def ready(self) -> None:
        from agents import (
            checks,  # noqa: F401  (registers the settings checks)
            retention,
        )
        from agents.runs import decide_held
        from core.retention import register_purge
        from mcp_gateway.tools.call.approvals import register_agent_decider

        register_purge(self.name, retention.purge)
        register_agent_decider(decide_held)
