from django.apps import AppConfig


class McpGatewayConfig(AppConfig):
    name = "mcp_gateway"
    verbose_name = "MCP gateway"

    def ready(self) -> None:
        from apps_runtime.storage_quota import count_stored
        from core.retention import register_purge
        from mcp_gateway import (
            checks,  # noqa: F401  (registers the system checks of its settings)
            retention,
        )
        from mcp_gateway.mcp_tasks.approval_waits import decided
        from mcp_gateway.mcp_tasks.store import kept_result_bytes
        from mcp_gateway.tools.call.approvals import register_decision_listener

        register_purge(self.name, retention.purge)
        # Kept task results count against the tenant's one storage quota, with job bodies and errors.
        count_stored("task results", kept_result_bytes)
        # A decided approval that a task waits on runs the task, or ends it refused, at once.
        register_decision_listener(decided)
