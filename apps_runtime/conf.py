"""The environment-driven settings the app runtime reads, by area: type, default and bounds of each.

``lowcode_platform/settings.py`` reads them at start-up; ``checks.py`` applies the same bounds to the
settings as they are when checks run. Imports nothing but ``core``: the settings module loads it.
"""

from __future__ import annotations

from core.env_settings import Bool, Float, Int, IntRange, Items, Json, OptionalText, SettingsGroup, Text

# The longest time a task's route may take (a manifest's task timeoutMs and TASK_MAX_TIMEOUT_MS).
TASK_TIMEOUT_MS_CEILING = 60 * 60 * 1000


class DeploySettings(SettingsGroup):
    # Prefix (20) + "_" + app (40) + "_" + tool (40) can exceed any limit; below 24 the hashed form
    # (limit - 9 characters of name) would keep too little of the name to be readable.
    MCP_WIRE_NAME_LIMIT = Int(64, low=24, high=128)


class SandboxSettings(SettingsGroup):
    """The handler sandbox (docs/isolation.md); ``apps.py`` configures it from these."""

    SANDBOX_DEFAULT_TIMEOUT_MS = Int(10_000, low=100)
    SANDBOX_MAX_TIMEOUT_MS = Int(30_000, low=100)  # below SANDBOX_MIN_TIMEOUT_MS no route could run
    SANDBOX_MEMORY_MB = Int(256, low=16)
    SANDBOX_MAX_REQUEST_BYTES = Int(1024 * 1024, low=1)
    SANDBOX_MAX_RESPONSE_BYTES = Int(4 * 1024 * 1024, low=1)
    SANDBOX_MAX_LOG_BYTES = Int(64 * 1024, low=0)
    SANDBOX_MAX_DATA_CALLS = Int(1000, low=0)
    # Isolation tiers: 1 namespaces (bubblewrap), 2 Landlock + seccomp, 3 resource limits and a uid
    # drop. The server refuses to start below SANDBOX_MIN_TIER; SANDBOX_TIER forces one (tests,
    # benchmarks). Tier 3 confines files and processes but not the network: a handler there reaches
    # TCP services on loopback (Redis, PostgreSQL, this platform). So the default refuses it, with
    # DEBUG too (make demo): an operator who accepts that names it, SANDBOX_MIN_TIER=3.
    SANDBOX_MIN_TIER = Int(2, low=1, high=3)
    # No bound here: configure_sandbox, in AppConfig.ready, already refuses an unknown tier.
    SANDBOX_TIER = OptionalText(None)
    # 0: twice the host's cores, at least 4 (apps_runtime.sandbox.supervisor.default_per_tenant).
    SANDBOX_MAX_CONCURRENT_PER_TENANT = Int(0, low=0)
    # Warm workers (docs/isolation.md): per server process at most SANDBOX_WARM_WORKERS (0: off; -1:
    # half of SANDBOX_MAX_CONCURRENT) and SANDBOX_WARM_WORKERS_PER_TENANT (0: a quarter of those), each
    # recycled after SANDBOX_WARM_MAX_CALLS calls, SANDBOX_WARM_IDLE_S seconds idle or
    # SANDBOX_WARM_MAX_GROWTH_MB of growth.
    SANDBOX_WARM_WORKERS = Int(-1, low=-1)
    SANDBOX_WARM_WORKERS_PER_TENANT = Int(0, low=0)
    SANDBOX_WARM_MAX_CALLS = Int(1000, low=1)
    SANDBOX_WARM_IDLE_S = Float(300.0, low=0.001)
    SANDBOX_WARM_MAX_GROWTH_MB = Int(64, low=1)
    # What one tenant's warm workers may hold in all, per server process (docs/isolation.md, "Cost"): a
    # worker whose call takes its tenant over is recycled. Every SANDBOX_SUPERSEDED_CHECK_S seconds a
    # server retires its warm workers of app versions a deploy, rollback or undeploy made elsewhere
    # superseded.
    SANDBOX_WARM_TENANT_MEMORY_MB = Int(512, low=16)
    SANDBOX_SUPERSEDED_CHECK_S = Float(5.0, low=0.1)
    SANDBOX_QUEUE_TIMEOUT_MS = Int(5000, low=0)
    # Call slots: at most SANDBOX_MAX_CONCURRENT handler runs at once per server process, each with a
    # tmpfs of SANDBOX_SCRATCH_MB and (as root) a uid of its own from SANDBOX_UID_RANGE ("first-last"),
    # which must be free on the host. Unset: the sandbox's own defaults (docs/isolation.md).
    SANDBOX_MAX_CONCURRENT = Int(64, low=1)
    SANDBOX_SCRATCH_MB = Int(64, low=1)
    SANDBOX_UID_RANGE = IntRange(None)


class JobsSettings(SettingsGroup):
    """App jobs (cron and queued runs); given ``CELERY_TASK_ALWAYS_EAGER`` (no broker)."""

    # Beat's dispatcher tick when set (tests); 0: every minute. Ticks are idempotent.
    JOBS_DISPATCH_EVERY_SECONDS = Int(0, low=0)
    # Attempts per run (retried when the handler answers 503 or times out), exponential backoff
    # between attempts, grace past a route's time limit before a running attempt counts as lost, how
    # many past minutes a late dispatcher still fires, when a queued run's task is sent again, and how
    # many runs one handler call may queue.
    JOBS_MAX_ATTEMPTS = Int(3, low=1)
    JOBS_RETRY_BACKOFF_SECONDS = Float(10.0, low=0)
    JOBS_RETRY_BACKOFF_MAX_SECONDS = Float(600.0, low=0)
    JOBS_RUN_GRACE_SECONDS = Int(30, low=0)
    JOBS_DISPATCH_LOOKBACK_MINUTES = Int(5, low=0)
    JOBS_QUEUED_RESEND_SECONDS = Int(900, low=1)
    JOBS_MAX_ENQUEUES_PER_CALL = Int(100, low=0)
    # Runaway chains: a handler that queues its own route would run forever (or double at every
    # level). A run queued by a run is one level deeper, up to JOBS_MAX_CHAIN_DEPTH; a tenant may have
    # at most JOBS_MAX_QUEUED_RUNS_PER_TENANT runs queued or running. Past either, request.enqueue
    # raises LimitExceeded. A tree of runs started by one handler call has at most
    # JOBS_MAX_RUNS_PER_CALL runs in all, and a tenant queues at most
    # JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE runs a minute (depth alone allows 100^8).
    JOBS_MAX_CHAIN_DEPTH = Int(8, low=1)
    JOBS_MAX_QUEUED_RUNS_PER_TENANT = Int(1000, low=1)
    JOBS_MAX_RUNS_PER_CALL = Int(500, low=1)
    JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE = Int(300, low=1)
    # With no broker, runs execute on JOBS_IN_PROCESS_WORKERS threads of the server, at most
    # JOBS_TENANT_SHARE of them for one tenant: never in the thread of the request that queued them.
    JOBS_IN_PROCESS_WORKERS = Int(2, low=1)
    JOBS_TENANT_SHARE = Int(1, low=1)
    # With no broker (the embedded default) the server process ticks the scheduler itself.
    JOBS_IN_PROCESS_CLOCK = Bool(lambda known: known["CELERY_TASK_ALWAYS_EAGER"])


class RecordsSettings(SettingsGroup):
    """Records: a query's filters stay few (each is a JSON key lookup), and a tenant's storage is
    bounded per record and in total (sizes are compact UTF-8 JSON bytes of the record's data). A query
    page is cut at its byte budget before its records are loaded; one loading more than
    RECORDS_HEAVY_READ_BYTES holds one of the tenant's RECORDS_HEAVY_READS_PER_TENANT slots (per
    process)."""

    RECORDS_QUERY_MAX_WHERE_KEYS = Int(20, low=1)
    RECORDS_HEAVY_READ_BYTES = Int(1024 * 1024, low=1)
    RECORDS_HEAVY_READS_PER_TENANT = Int(2, low=1)
    RECORDS_MAX_RECORD_BYTES = Int(256 * 1024, low=1)
    RECORDS_TENANT_QUOTA_BYTES = Int(100 * 1024 * 1024, low=1)


class RetentionSettings(SettingsGroup):
    """Storage outside records (manage.py purge_expired; beat runs it hourly, the in-process clock
    with no broker): error records and finished job runs are kept RETENTION_*_DAYS and at most
    RETENTION_*_PER_TENANT per tenant (error records are also trimmed as each one is written); the
    results MCP tasks keep (until their TTL) count against TENANT_STORAGE_QUOTA_BYTES."""

    RETENTION_ERROR_DAYS = Float(14.0, low=0.01)
    RETENTION_ERRORS_PER_TENANT = Int(1000, low=1)
    RETENTION_JOB_RUN_DAYS = Float(14.0, low=0.01)
    RETENTION_JOB_RUNS_PER_TENANT = Int(10_000, low=1)
    # Outbound requests' audit rows: kept this many days, and at most this many per tenant.
    RETENTION_OUTBOUND_DAYS = Float(30.0, low=0.01)
    RETENTION_OUTBOUND_PER_TENANT = Int(100_000, low=1)
    # What successful handler runs printed (lcp dev, lcp logs): the head of each run's logs up to this
    # many bytes (0: keep none), the newest rows of an app and of a tenant, for this many hours.
    RETENTION_CALL_LOG_BYTES = Int(4096, low=0)
    RETENTION_CALL_LOGS_PER_APP = Int(200, low=1)
    RETENTION_CALL_LOGS_PER_TENANT = Int(1000, low=1)
    RETENTION_CALL_LOG_HOURS = Float(24.0, low=0.01)


class EgressSettings(SettingsGroup):
    """Handlers' outbound requests (docs/egress.md)."""

    # Networks a handler's outbound request may reach although they are loopback, private,
    # link-local, CGNAT, multicast or cloud metadata (always refused otherwise, after DNS and on every
    # redirect), as CIDRs (checks.py parses them): e.g. 127.0.0.1/32 for a test's fake API or the
    # demo's status page. Default: none.
    EGRESS_ALLOWED_NETWORKS = Items([])
    # OAuth providers members connect their own accounts to (manifest `connections`), JSON:
    # {"crm": {"authorize_url", "token_url", "client_id", "client_secret", "scopes": [...]}}.
    OUTBOUND_OAUTH_PROVIDERS = Json({})
    # Outbound requests one handler call may make, and the bytes they may send and receive in all.
    EGRESS_MAX_REQUESTS_PER_CALL = Int(20, low=0)
    EGRESS_MAX_BYTES_PER_CALL = Int(8 * 1024 * 1024, low=1)
    # One request's body, and one response's (streamed; the request stops at the cap).
    EGRESS_MAX_REQUEST_BYTES = Int(1024 * 1024, low=1)
    EGRESS_MAX_RESPONSE_BYTES = Int(2 * 1024 * 1024, low=1)
    # Outbound requests in flight at once, per tenant (in each process) and in all: a tenant whose
    # upstream hangs holds only its own share.
    EGRESS_MAX_CONCURRENT_PER_TENANT = Int(4, low=1)
    EGRESS_MAX_CONCURRENT = Int(64, low=1)
    # Per-request timeouts (seconds), each also cut to what is left of the route's time limit.
    EGRESS_CONNECT_TIMEOUT = Float(5.0, low=0.01)
    EGRESS_READ_TIMEOUT = Float(15.0, low=0.01)
    EGRESS_MAX_REDIRECTS = Int(5, low=0, high=20)
    # Outbound requests one tenant's handlers may start per minute (in each process).
    EGRESS_MAX_REQUESTS_PER_TENANT_MINUTE = Int(600, low=0)


class TenantShareSettings(SettingsGroup):
    """A member (Caller.person_key) may take at most TENANT_MEMBER_SHARE_PERCENT of a tenant-wide cap,
    always below the cap (core.member_shares): tasks waiting to start, runs queued a minute and
    unfinished, stored bytes and error records kept. What a tenant stores outside records (bodies of
    unfinished job runs, kept MCP task results, error records) counts against one quota,
    TENANT_STORAGE_QUOTA_BYTES, a member's share of it included (apps_runtime.storage_quota)."""

    TENANT_MEMBER_SHARE_PERCENT = Int(25, low=1, high=99)
    TENANT_STORAGE_QUOTA_BYTES = Int(256 * 1024 * 1024, low=1024)


class ScreensSettings(SettingsGroup):
    """Where screens' documents (tenant HTML and scripts) are served from, e.g.
    https://usercontent.example: an origin on another site than the platform (its own registrable
    domain, checked at start by ``checks.py``), so no cookie of the platform's ever reaches it. Unset:
    they are served from the platform's own host, sandboxed to an opaque origin, which is as safe for
    cookies and storage. The same deployment answers it (add its host to ALLOWED_HOSTS);
    PUBLIC_BASE_URL must be set then."""

    SCREENS_ORIGIN = Text("")
    # How long the signed link to a screen's document (minted by the host page for its visitor) is
    # good for: long enough to load the frame on a slow network, short enough that a link copied out
    # of the page soon stops opening it.
    SCREENS_GRANT_SECONDS = Int(600, low=10, high=86400)


# The groups apps_runtime's system check (apps_runtime.E001) bounds.
GROUPS = (
    DeploySettings,
    SandboxSettings,
    JobsSettings,
    RecordsSettings,
    RetentionSettings,
    TenantShareSettings,
    ScreensSettings,
    EgressSettings,
)
