"""The environment-driven settings of tenant agents: type, default and bounds of each.

``lowcode_platform/settings.py`` reads them at start-up; ``checks.py`` applies the same bounds to the
settings as they are when checks run (and checks the provider list). Imports nothing but ``core``.
"""

from __future__ import annotations

from core.env_settings import Float, Int, Json, SettingsGroup, Text


class AgentSettings(SettingsGroup):
    """AGENT_PROVIDERS lists the model endpoints tenants may use, as JSON: a name for each, with its
    kind ("openai": an OpenAI-compatible chat-completions API; "anthropic": Anthropic's Messages API)
    and base URL. Tenants pick a provider by name and store their own key for it; no URL ever comes
    from a tenant. Keys are encrypted with AGENT_KEY_ENCRYPTION_KEY (default: derived from
    SECRET_KEY). Without a broker, AGENT_RUN_IN_PROCESS_WORKERS threads of the server run the runs,
    at most AGENT_RUN_TENANT_SHARE of them for one tenant (a run mostly waits on its provider); a run
    still running past its wall time plus AGENT_RUN_GRACE_SECONDS was lost and fails, a run queued
    for AGENT_RUN_RESEND_SECONDS is sent again; a running run looks for a cancel every
    AGENT_CANCEL_POLL_SECONDS; the SSE endpoint looks for new steps every AGENT_EVENTS_POLL_SECONDS
    and ends after AGENT_EVENTS_MAX_SECONDS (the client reconnects)."""

    AGENT_PROVIDERS = Json(
        {
            "openai": {"kind": "openai", "base_url": "https://api.openai.com/v1"},
            "anthropic": {"kind": "anthropic", "base_url": "https://api.anthropic.com"},
        }
    )
    AGENT_KEY_ENCRYPTION_KEY = Text("")
    AGENT_RUN_IN_PROCESS_WORKERS = Int(4, low=1)
    AGENT_RUN_TENANT_SHARE = Int(2, low=1)
    AGENT_RUN_GRACE_SECONDS = Int(60, low=0)
    AGENT_RUN_RESEND_SECONDS = Int(120, low=0)
    AGENT_CANCEL_POLL_SECONDS = Float(0.5, low=0.01)
    AGENT_EVENTS_POLL_SECONDS = Float(0.5, low=0.01)
    AGENT_EVENTS_MAX_SECONDS = Float(300.0, low=1)
    # A finished run (completed, failed, cancelled) and its steps are deleted this many days after it
    # ended (manage.py purge_expired; beat runs it hourly, the in-process clock with no broker).
    RETENTION_AGENT_RUN_DAYS = Float(30.0, low=0.01)


# The groups the agents' system check (agents.E001) bounds.
GROUPS = (AgentSettings,)
