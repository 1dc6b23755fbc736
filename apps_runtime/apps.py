from django.apps import AppConfig
from django.conf import settings

from apps_runtime.sandbox import configure_sandbox  # stdlib-only: safe before the app registry


class AppsRuntimeConfig(AppConfig):
    name = "apps_runtime"
    verbose_name = "Apps runtime"

    def ready(self) -> None:
        from apps_runtime import checks  # noqa: F401  (registers the system checks of its settings)

        # Configured here, started lazily: only processes that run handlers pay for a zygote.
        options = {"uid_range": settings.SANDBOX_UID_RANGE} if settings.SANDBOX_UID_RANGE else {}
        configure_sandbox(
            bundle_root=str(settings.SANDBOX_BUNDLE_DIR),
            min_tier=settings.SANDBOX_MIN_TIER,
            tier=settings.SANDBOX_TIER,
            max_concurrent_per_tenant=settings.SANDBOX_MAX_CONCURRENT_PER_TENANT,
            queue_timeout_ms=settings.SANDBOX_QUEUE_TIMEOUT_MS,
            max_concurrent=settings.SANDBOX_MAX_CONCURRENT,
            scratch_mb=settings.SANDBOX_SCRATCH_MB,
            **options,
        )
