from django.apps import AppConfig


class McpGatewayConfig(AppConfig):
    name = "mcp_gateway"
