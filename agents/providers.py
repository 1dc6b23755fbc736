"""The model providers tenants may use: listed by the operator, never named by URL by a tenant.

``AGENT_PROVIDERS`` (a setting) maps a provider name to its kind and base URL. An agent names a
provider by that name and a model by its provider's model name; the URL its requests go to, and
the key they carry, come only from here and from the tenant's stored key. So no tenant value can
point a request at another host (no SSRF through agent configuration).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.conf import settings

from agents.exceptions import UnknownProvider

if TYPE_CHECKING:
    from pydantic_ai.models import Model

KINDS = ("openai", "anthropic")  # OpenAI-compatible chat completions; Anthropic's Messages API


@dataclass(frozen=True)
class ProviderEndpoint:
    name: str
    kind: str
    base_url: str


def listed_providers() -> dict[str, ProviderEndpoint]:
    """The operator's providers, by name (``AGENT_PROVIDERS``; checked at start-up by ``checks.py``)."""
    return {
        name: ProviderEndpoint(name, spec["kind"], spec["base_url"])
        for name, spec in sorted(settings.AGENT_PROVIDERS.items())
    }


def provider_endpoint(name: str) -> ProviderEndpoint:
    """Raises: UnknownProvider: the operator does not list ``name``."""
    providers = listed_providers()
    try:
        return providers[name]
    except KeyError:
        raise UnknownProvider(name, list(providers)) from None


def endpoint_problems(name: str, spec: object) -> list[str]:
    """What is wrong with one entry of ``AGENT_PROVIDERS`` (nothing when it is valid)."""
    if not isinstance(spec, dict):
        return [f"{name}: must be an object with kind and base_url"]
    problems = []
    if spec.get("kind") not in KINDS:
        problems.append(f"{name}: kind must be one of {', '.join(KINDS)}")
    url = spec.get("base_url")
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        problems.append(f"{name}: base_url must be an http(s) URL")
    elif parts.username or parts.password or parts.query or parts.fragment:
        problems.append(f"{name}: base_url must carry no credentials, query or fragment")
    return problems


def build_model(endpoint: ProviderEndpoint, model_name: str, api_key: str) -> Model:
    """The pydantic-ai model for ``model_name`` at the operator's endpoint, with the tenant's key.

    Both the URL and the key are passed explicitly, so the SDKs never fall back to environment
    variables (``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY``...) of the platform's own process.
    """
    # Imported here: the two SDKs take ~3 s of CPU to import, which every process (each manage.py
    # command, each served worker) paid at start-up for a path only an agent run takes.
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    if endpoint.kind == "anthropic":
        return AnthropicModel(
            model_name, provider=AnthropicProvider(api_key=api_key, base_url=endpoint.base_url)
        )
    return OpenAIChatModel(model_name, provider=OpenAIProvider(base_url=endpoint.base_url, api_key=api_key))
