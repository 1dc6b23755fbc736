from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    verbose_name = "Tenants"

    def ready(self) -> None:
        from core.retention import register_purge
        from tenants import retention
        from tenants.api import schema  # noqa: F401  (registers the OpenAPI bearer scheme)

        register_purge(self.name, retention.purge)
