from django.apps import AppConfig


class BuilderConfig(AppConfig):
    name = "builder"
    verbose_name = "Builders"

    def ready(self) -> None:
        from builder import checks  # noqa: F401  (registers the system check of its setting)
