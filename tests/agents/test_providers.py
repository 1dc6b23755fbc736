"""Providers come only from the operator's setting; keys are encrypted and go to their provider only."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from agents.exceptions import UnknownProvider
from agents.keys import KeyUnreadable, decrypt_key, encrypt_key
from agents.providers import build_model, provider_endpoint


def test_each_kind_builds_its_model_at_the_operators_url_with_the_tenants_key(settings, monkeypatch):
    # Imported here, not at the top: 1.6 s of CPU that every xdist worker paid to collect the module.
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.openai import OpenAIChatModel

    monkeypatch.setenv("OPENAI_BASE_URL", "http://169.254.169.254/latest")  # never consulted
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://169.254.169.254/latest")
    settings.AGENT_PROVIDERS = {
        "claude": {"kind": "anthropic", "base_url": "https://anthropic.example/"},
        "compatible": {"kind": "openai", "base_url": "https://llm.example/v1"},
    }
    claude = build_model(provider_endpoint("claude"), "claude-sonnet-4-5", "sk-ant-1")
    assert isinstance(claude, AnthropicModel)
    assert str(claude.client.base_url).startswith("https://anthropic.example")
    assert claude.client.api_key == "sk-ant-1"
    compatible = build_model(provider_endpoint("compatible"), "gpt-4.1-mini", "sk-oa-1")
    assert isinstance(compatible, OpenAIChatModel)
    assert str(compatible.client.base_url) == "https://llm.example/v1/"
    assert compatible.client.api_key == "sk-oa-1"


def test_a_provider_the_operator_does_not_list_is_refused(settings):
    settings.AGENT_PROVIDERS = {"compatible": {"kind": "openai", "base_url": "https://llm.example/v1"}}
    with pytest.raises(UnknownProvider) as refused:
        provider_endpoint("http://169.254.169.254/")
    assert "listed: compatible" in str(refused.value)


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "gemini", "base_url": "https://x.example"},
        {"kind": "openai", "base_url": "ftp://x.example"},
        {"kind": "openai", "base_url": "https://user:pw@x.example/v1"},
        {"kind": "openai"},
        "https://x.example",
    ],
)
def test_the_settings_check_refuses_a_bad_provider_entry(settings, spec):
    settings.AGENT_PROVIDERS = {"bad": spec}
    with pytest.raises(SystemCheckError, match="AGENT_PROVIDERS bad"):
        call_command("check")


def test_a_key_encrypted_under_another_secret_is_unreadable_not_garbage(settings):
    settings.AGENT_KEY_ENCRYPTION_KEY = "first secret"
    token = encrypt_key("sk-abc")
    assert "sk-abc" not in token and decrypt_key(token, "p") == "sk-abc"
    settings.AGENT_KEY_ENCRYPTION_KEY = "rotated secret"
    with pytest.raises(KeyUnreadable):
        decrypt_key(token, "p")
