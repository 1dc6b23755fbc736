from django.apps import AppConfig


class OAuthConfig(AppConfig):
    name = "oauth"
    verbose_name = "OAuth connections"

    def ready(self) -> None:
        from core.retention import register_purge
        from oauth import checks  # noqa: F401  (registers the system checks)
        from oauth.clients import purge_unused_clients
        from oauth.connections import live_grant, revoke_member_connections
        from tenants.callers import register_grant_lookup
        from tenants.signals import member_removed

        register_grant_lookup(live_grant)
        register_purge(self.name, lambda now: {"oauth_clients": purge_unused_clients(now)})

        member_removed.connect(revoke_member_connections, dispatch_uid="oauth.revoke_member_connections")
