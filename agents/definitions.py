"""Defining agents and storing provider keys: the tenant admins' actions, each atomic and audited.

``clean_definition`` is the one rule for an agent's fields, used by the API and the console: it
collects every problem as (field, message) and raises them together.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.exceptions import AgentNotFound, InvalidAgent, UnknownProvider
from agents.keys import encrypt_key
from agents.models import AGENT_NAME_RE, Agent, ProviderKey
from agents.providers import provider_endpoint
from agents.runners import runners_problem
from tenants.authority import require_tenant_admin
from tenants.models import ROLE_RE, Tenant, TenantAuditLog

# Each limit's accepted range, both ends included: a run is bounded even when its agent's limits are
# the highest allowed.
LIMITS: dict[str, tuple[int, int]] = {
    "max_steps": (1, 100),
    "max_tool_calls": (0, 500),
    "max_tokens": (100, 10_000_000),
    "max_seconds": (1, 3600),
}
INSTRUCTIONS_MAX = 20_000
MODEL_RE = r"^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,99}$"
APP_SELECTOR_RE = r"^app:[a-z][a-z0-9_]{0,39}$"
WIRE_NAME_RE = r"^[a-z0-9_]{1,128}$"
MAX_SELECTORS = 200
MAX_ROLES = 100
API_KEY_MAX = 1000
FIELDS = ("name", "instructions", "provider", "model", "tools", "run_as", "service_roles", "runners", *LIMITS)


def _text_problems(problems: list, field: str, value: Any, pattern: str, rule: str) -> None:
    if not isinstance(value, str) or not re.fullmatch(pattern, value):
        problems.append((field, rule))


def clean_definition(data: dict[str, Any], *, partial: bool = False) -> dict[str, Any]:
    """The agent fields of ``data``, checked; unknown keys are refused.

    Raises:
        InvalidAgent: every problem found, each as (field, message).
    """
    problems: list[tuple[str, str]] = []
    for key in sorted(set(data) - set(FIELDS)):
        problems.append((key, f"unknown field (known: {', '.join(FIELDS)})"))
    required = () if partial else ("name", "provider", "model")
    for key in required:
        if key not in data:
            problems.append((key, "required"))
    cleaned = {key: data[key] for key in FIELDS if key in data}
    if "name" in cleaned:
        _text_problems(problems, "name", cleaned["name"], AGENT_NAME_RE, f"must match {AGENT_NAME_RE}")
    if "instructions" in cleaned:
        value = cleaned["instructions"]
        if not isinstance(value, str) or len(value) > INSTRUCTIONS_MAX:
            problems.append(("instructions", f"a string of at most {INSTRUCTIONS_MAX} characters"))
    if "provider" in cleaned:
        try:
            provider_endpoint(cleaned["provider"] if isinstance(cleaned["provider"], str) else "")
        except UnknownProvider as err:
            problems.append(("provider", str(err)))
    if "model" in cleaned:
        _text_problems(problems, "model", cleaned["model"], MODEL_RE, f"a model name matching {MODEL_RE}")
    if "tools" in cleaned:
        problems.extend(_selector_problems(cleaned["tools"]))
    for key, (low, high) in LIMITS.items():
        if key in cleaned:
            value = cleaned[key]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                problems.append((key, f"an integer from {low} to {high}"))
    if "run_as" in cleaned and cleaned["run_as"] not in Agent.RunAs.values:
        problems.append(("run_as", f"one of {', '.join(Agent.RunAs.values)}"))
    if "service_roles" in cleaned:
        roles = cleaned["service_roles"]
        if not isinstance(roles, list) or len(roles) > MAX_ROLES:
            problems.append(("service_roles", f"a list of at most {MAX_ROLES} role names"))
        elif any(not isinstance(role, str) or not re.fullmatch(ROLE_RE, role) for role in roles):
            problems.append(("service_roles", f"role names must match {ROLE_RE}"))
        else:
            cleaned["service_roles"] = sorted(set(roles))
    if "runners" in cleaned:
        if cleaned["runners"] is None:
            cleaned["runners"] = ""  # null: back to the default
        problem = runners_problem(cleaned["runners"])
        if problem is not None:
            problems.append(("runners", problem))
    if problems:
        raise InvalidAgent(problems)
    return cleaned


def _selector_problems(tools: Any) -> list[tuple[str, str]]:
    if tools is None:
        return []
    rule = f"null (every tool the caller may use) or a list of at most {MAX_SELECTORS} selectors"
    if not isinstance(tools, list) or len(tools) > MAX_SELECTORS:
        return [("tools", rule)]
    return [
        (f"tools[{i}]", "an app selector 'app:<app name>' or a tool's wire name")
        for i, item in enumerate(tools)
        if not isinstance(item, str)
        or not (re.fullmatch(APP_SELECTOR_RE, item) or re.fullmatch(WIRE_NAME_RE, item))
    ]


def _audit(
    tenant: Tenant, acting_user: AbstractBaseUser | None, action: str, target: str, **values: Any
) -> None:
    TenantAuditLog.objects.create(
        tenant=tenant, acting_user=acting_user, action=action, target=target, **values
    )


def _public(agent: Agent) -> dict[str, Any]:
    return {key: getattr(agent, key) for key in FIELDS}


def access_agent(tenant: Tenant, name: str) -> Agent:
    """Raises: AgentNotFound."""
    agent = Agent.objects.for_tenant(tenant).filter(name=name).first()
    if agent is None:
        raise AgentNotFound(name)
    return agent


def create_agent(tenant: Tenant, data: dict[str, Any], *, acting_user: AbstractBaseUser | None) -> Agent:
    """Raises: NotAllowed (tenants), InvalidAgent (including a name already taken)."""
    require_tenant_admin(tenant, acting_user)
    cleaned = clean_definition(data)
    try:
        with transaction.atomic():
            agent = Agent.objects.create(tenant=tenant, **cleaned)
            _audit(tenant, acting_user, "agent.create", agent.name, new_value=_public(agent))
    except IntegrityError:
        raise InvalidAgent([("name", f"an agent named '{cleaned['name']}' already exists")]) from None
    return agent


def update_agent(
    tenant: Tenant, name: str, data: dict[str, Any], *, acting_user: AbstractBaseUser | None
) -> Agent:
    """Change some fields of an agent (not its name). Raises: NotAllowed, AgentNotFound, InvalidAgent."""
    require_tenant_admin(tenant, acting_user)
    agent = access_agent(tenant, name)
    cleaned = clean_definition(data, partial=True)
    if cleaned.get("name", name) != name:
        raise InvalidAgent([("name", "an agent's name cannot change")])
    with transaction.atomic():
        old = _public(agent)
        for key, value in cleaned.items():
            setattr(agent, key, value)
        agent.updated_at = timezone.now()
        agent.save(update_fields=[*cleaned, "updated_at"])
        _audit(tenant, acting_user, "agent.update", name, old_value=old, new_value=_public(agent))
    return agent


def delete_agent(tenant: Tenant, name: str, *, acting_user: AbstractBaseUser | None) -> None:
    """Delete an agent and its runs. Raises: NotAllowed, AgentNotFound."""
    require_tenant_admin(tenant, acting_user)
    agent = access_agent(tenant, name)
    with transaction.atomic():
        _audit(tenant, acting_user, "agent.delete", name, old_value=_public(agent))
        agent.delete()


def set_provider_key(
    tenant: Tenant, provider: str, api_key: str, *, acting_user: AbstractBaseUser | None
) -> ProviderKey:
    """Store (or replace) the tenant's key for ``provider``, encrypted; the audit log never holds it.

    Raises:
        NotAllowed: not a tenant admin.
        UnknownProvider: the operator does not list ``provider``.
        InvalidAgent: an empty or oversized key.
    """
    require_tenant_admin(tenant, acting_user)
    provider_endpoint(provider)
    if not isinstance(api_key, str) or not api_key.strip() or len(api_key) > API_KEY_MAX:
        raise InvalidAgent([("api_key", f"a non-empty string of at most {API_KEY_MAX} characters")])
    with transaction.atomic():
        key, _ = ProviderKey.objects.for_tenant(tenant).update_or_create(
            tenant=tenant,
            provider=provider,
            defaults={
                "encrypted_key": encrypt_key(api_key.strip()),
                "set_by": acting_user if acting_user and acting_user.is_authenticated else None,
                "updated_at": timezone.now(),
            },
        )
        _audit(tenant, acting_user, "agent_provider_key.set", provider)
    return key


def delete_provider_key(tenant: Tenant, provider: str, *, acting_user: AbstractBaseUser | None) -> bool:
    """Forget the tenant's key for ``provider``; False when none was stored. Raises: NotAllowed."""
    require_tenant_admin(tenant, acting_user)
    with transaction.atomic():
        deleted, _ = ProviderKey.objects.for_tenant(tenant).filter(provider=provider).delete()
        if deleted:
            _audit(tenant, acting_user, "agent_provider_key.delete", provider)
    return bool(deleted)
