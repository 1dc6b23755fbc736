from django.apps import AppConfig


class OAuthConfig(AppConfig):
    name = "oauth"
    verbose_name = "OAuth connections"

    def ready(self) -> None:
        from oauth import checks  # noqa: F401  (registers the system checks)
