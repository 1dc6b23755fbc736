from django.apps import AppConfig


class OAuthConfig(AppConfig):
    name = "oauth"
    verbose_name = "OAuth connections"

    def ready(self) -> None:
        from oauth import checks  # noqa: F401  (registers the system checks)
        from oauth.connections import revoke_member_connections
        from tenants.signals import member_removed

        member_removed.connect(revoke_member_connections, dispatch_uid="oauth.revoke_member_connections")
