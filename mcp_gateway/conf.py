"""The environment-driven settings the MCP gateway reads, by area: type, default and bounds of each.

``lowcode_platform/settings.py`` reads them at start-up; ``checks.py`` applies the same bounds to the
settings as they are when checks run. Imports nothing but ``core`` and ``apps_runtime.conf``.
"""

from __future__ import annotations

from apps_runtime.conf import TASK_TIMEOUT_MS_CEILING
from core.env_settings import Bool, Float, Int, Items, OptionalText, SettingsGroup


class TransportSettings(SettingsGroup):
    """The MCP transport and its sessions."""

    # Stateful sessions carry list_changed notifications to handshake-era clients; set
    # MCP_STATELESS=true behind a load balancer without sticky sessions.
    MCP_STATELESS = Bool(False)
    MCP_NOTIFY_INTERVAL_SECONDS = Float(1.0, low=0.01)  # the poll loop must not spin
    MCP_ALLOWED_ORIGINS = Items(["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
    # The SDK's session cap is global, so sessions are also capped per token, per member and per
    # tenant (at a token's or member's cap its least recently used idle session ends to make room),
    # and sessions with no request in flight for MCP_SESSION_IDLE_SECONDS end.
    MCP_SESSIONS_PER_TOKEN = Int(20, low=1)
    MCP_SESSIONS_PER_MEMBER = Int(40, low=1)
    MCP_SESSIONS_PER_TENANT = Int(200, low=1)
    MCP_SESSION_IDLE_SECONDS = Float(600.0, low=1)
    # 2026-07-28 subscriptions/listen streams (each an HTTP response held open): at most this many per
    # token or OAuth connection, per member (all their credentials) and per tenant, in each server
    # process; one more is refused (JSON-RPC -32029). Each stream ends gracefully after
    # MCP_LISTEN_STREAM_SECONDS (the client re-listens), and when its credential is revoked.
    MCP_LISTEN_STREAMS_PER_TOKEN = Int(10, low=1)
    MCP_LISTEN_STREAMS_PER_MEMBER = Int(20, low=1)
    MCP_LISTEN_STREAMS_PER_TENANT = Int(200, low=1)
    MCP_LISTEN_STREAM_SECONDS = Float(3600.0, low=1)
    # Each POST is answered with one JSON body, not an event stream (cheaper; list_changed still goes
    # on the session's GET stream), except a tools/call that needs the stream for progress or
    # elicitation (mcp_gateway.transport.streaming decides per POST). Off: every POST gets a stream.
    MCP_JSON_RESPONSES = Bool(True)
    # The SDK's OpenTelemetry span around each MCP message: on where an OpenTelemetry SDK exports them.
    MCP_OPENTELEMETRY = Bool(False)


class FairnessSettings(SettingsGroup):
    """The worker threads that run tool work, and each tenant's share of them. A tenant waits for its
    share on the event loop, before taking a thread, so one tenant flooding slow tools cannot starve
    the others; past MCP_TENANT_QUEUE waiting calls or MCP_TENANT_QUEUE_SECONDS of wait a call is
    refused (retry later)."""

    MCP_WORKER_THREADS = Int(32, low=1)
    MCP_TENANT_SHARE = Int(lambda known: max(1, known["MCP_WORKER_THREADS"] // 4), low=1)
    MCP_TENANT_QUEUE = Int(lambda known: 16 * known["MCP_TENANT_SHARE"], low=0)
    MCP_TENANT_QUEUE_SECONDS = Float(30.0, low=0)


class ToolSettings(SettingsGroup):
    """Lists, catalogs, tool results, confirmations and rate-limit counters."""

    MCP_PAGE_SIZE = Int(250, low=1)
    MCP_CATALOG_CACHE_SECONDS = Int(300, low=0)
    # Explicit content a handler returns ({"content": [...]}): at most this many items, bytes per item
    # (text as UTF-8, an image decoded) and bytes in all; past any bound the call is an isError.
    MCP_CONTENT_MAX_ITEMS = Int(20, low=1)
    MCP_CONTENT_MAX_ITEM_BYTES = Int(1024 * 1024, low=1)
    MCP_CONTENT_MAX_BYTES = Int(2 * 1024 * 1024, low=1)
    # Confirmations (tools marked "confirm"): how long the user has to answer, on the call's stream
    # (handshake-era clients) or before the sealed requestState of a 2026-07-28 retry expires; also
    # how long a call asked by URL waits for the step at the page (protocol.asking).
    MCP_CONFIRM_SECONDS = Float(300.0)
    # Tool rate limits (manifest rateLimit, tenant setting toolRateLimit) are counted in Redis when
    # this is set (production: every replica sees one count), else in the database. Redis down: calls
    # go through uncounted, with a warning (mcp_gateway/limits/rate_counters.py says why).
    RATE_LIMIT_REDIS_URL = OptionalText(None)


class TaskSettings(SettingsGroup):
    """MCP tasks (tools with "task" in the manifest): a task's route may take up to
    TASK_MAX_TIMEOUT_MS (routes of other tools stop at SANDBOX_MAX_TIMEOUT_MS); a finished task is
    kept for the TTL the client asks, at most TASK_MAX_TTL_MS (TASK_DEFAULT_TTL_MS when it asks none);
    a caller may have TASK_MAX_ACTIVE_PER_CALLER unfinished tasks and a tenant
    TASK_MAX_ACTIVE_PER_TENANT; tasks/result waits at most TASK_RESULT_WAIT_SECONDS for the end; a
    stored result is at most TASK_MAX_RESULT_BYTES. A member's credentials together may have
    TASK_MAX_ACTIVE_PER_MEMBER; a tenant may have TASK_MAX_QUEUED_PER_TENANT tasks not yet started,
    and one not started within TASK_QUEUE_SECONDS fails without running. Without a broker,
    TASK_IN_PROCESS_WORKERS threads of the server run them, at most TASK_TENANT_SHARE for one tenant,
    the tenants served in turn. A task queued for TASK_RESEND_SECONDS without starting is sent again;
    one running past its time limit plus TASK_RUN_GRACE_SECONDS was lost with its worker and fails.
    The results tasks keep (until their TTL) count against TENANT_STORAGE_QUOTA_BYTES."""

    TASK_MAX_TIMEOUT_MS = Int(15 * 60 * 1000, low=100, high=TASK_TIMEOUT_MS_CEILING)
    TASK_DEFAULT_TTL_MS = Int(60 * 60 * 1000, low=1000)
    TASK_MAX_TTL_MS = Int(24 * 60 * 60 * 1000, low=1000)
    TASK_POLL_INTERVAL_MS = Int(1000, low=100)
    TASK_MAX_ACTIVE_PER_CALLER = Int(10, low=1)
    TASK_MAX_ACTIVE_PER_MEMBER = Int(20, low=1)
    TASK_MAX_ACTIVE_PER_TENANT = Int(200, low=1)
    TASK_MAX_QUEUED_PER_TENANT = Int(20, low=1)
    TASK_QUEUE_SECONDS = Int(600, low=1)
    TASK_RESULT_WAIT_SECONDS = Float(30.0, low=0)
    TASK_MAX_RESULT_BYTES = Int(1024 * 1024, low=1024)
    TASK_IN_PROCESS_WORKERS = Int(2, low=1)
    TASK_TENANT_SHARE = Int(lambda known: max(1, known["TASK_IN_PROCESS_WORKERS"] // 2), low=1)
    TASK_RESEND_SECONDS = Int(60, low=0)
    TASK_RUN_GRACE_SECONDS = Int(30, low=0)


class AuditRetentionSettings(SettingsGroup):
    """Audit rows are kept RETENTION_AUDIT_DAYS and at most RETENTION_AUDIT_ROWS_PER_TENANT per tenant."""

    RETENTION_AUDIT_DAYS = Float(90.0, low=0.01)
    RETENTION_AUDIT_ROWS_PER_TENANT = Int(100_000, low=1)


class ApprovalSettings(SettingsGroup):
    """Out-of-band approvals of "confirm" tools (clients that cannot be asked): how long an approval
    request waits for a decision and, once approved, for the call to come again (a tool's
    "approvalTtl" overrides it), and how many undecided requests one member may have open at once."""

    APPROVAL_TTL_SECONDS = Int(900, low=60, high=7 * 86400)
    APPROVALS_MAX_PENDING_PER_MEMBER = Int(20, low=1)


class CodeModeSettings(SettingsGroup):
    """Code mode (docs/code-mode.md): a run_code script makes at most CODE_MODE_MAX_CALLS inner tool
    calls (never more than SANDBOX_MAX_DATA_CALLS), runs at most CODE_MODE_TIMEOUT_MS in all, inner
    calls included (``settings.py`` caps it at SANDBOX_MAX_TIMEOUT_MS), and prints at most
    CODE_MODE_MAX_OUTPUT_CHARS characters (the rest is cut, said so)."""

    CODE_MODE_MAX_CALLS = Int(50, low=1)
    CODE_MODE_TIMEOUT_MS = Int(20_000, low=100)  # SANDBOX_MIN_TIMEOUT_MS: below it no run could start
    CODE_MODE_MAX_OUTPUT_CHARS = Int(20_000, low=0)


# The groups the gateway's system check (mcp_gateway.E001) bounds.
GROUPS = (
    TransportSettings,
    FairnessSettings,
    ToolSettings,
    TaskSettings,
    AuditRetentionSettings,
    ApprovalSettings,
    CodeModeSettings,
)
