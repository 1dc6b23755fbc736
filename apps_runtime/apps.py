from django.apps import AppConfig
from django.conf import settings

from apps_runtime.sandbox import configure_sandbox  # stdlib-only: safe before the app registry


class AppsRuntimeConfig(AppConfig):
    name = "apps_runtime"
    verbose_name = "Apps runtime"

    def ready(self) -> None:
        from apps_runtime import (
            checks,  # noqa: F401  (registers the system checks of its settings)
            retention,
            tasks,  # noqa: F401  (registers run_job, which jobs.queue runs by name)
        )
        from core.retention import register_purge

        register_purge(self.name, retention.purge)
        # Configured here, started lazily: only processes that run handlers pay for a zygote.
        options = {"uid_range": settings.SANDBOX_UID_RANGE} if settings.SANDBOX_UID_RANGE else {}
        configure_sandbox(
            bundle_root=str(settings.SANDBOX_BUNDLE_DIR),
            min_tier=settings.SANDBOX_MIN_TIER,
            tier=settings.SANDBOX_TIER,
            max_concurrent_per_tenant=settings.SANDBOX_MAX_CONCURRENT_PER_TENANT or None,
            queue_timeout_ms=settings.SANDBOX_QUEUE_TIMEOUT_MS,
            max_concurrent=settings.SANDBOX_MAX_CONCURRENT,
            scratch_mb=settings.SANDBOX_SCRATCH_MB,
            warm_workers=None if settings.SANDBOX_WARM_WORKERS < 0 else settings.SANDBOX_WARM_WORKERS,
            warm_workers_per_tenant=settings.SANDBOX_WARM_WORKERS_PER_TENANT or None,
            warm_max_calls=settings.SANDBOX_WARM_MAX_CALLS,
            warm_idle_s=settings.SANDBOX_WARM_IDLE_S,
            warm_max_growth_mb=settings.SANDBOX_WARM_MAX_GROWTH_MB,
            warm_tenant_memory_mb=settings.SANDBOX_WARM_TENANT_MEMORY_MB,
            **options,
        )
