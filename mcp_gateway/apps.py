from django.apps import AppConfig


class McpGatewayConfig(AppConfig):
    name = "mcp_gateway"
    verbose_name = "MCP gateway"

    def ready(self) -> None:
        from core.retention import register_purge
        from mcp_gateway import (
            checks,  # noqa: F401  (registers the system checks of its settings)
            retention,
        )

        register_purge(self.name, retention.purge)
