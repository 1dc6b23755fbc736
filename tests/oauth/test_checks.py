"""System checks of the OAuth settings."""

from django.core.checks import run_checks


def _ids() -> set[str]:
    return {message.id for message in run_checks() if message.id.startswith("oauth.")}


def test_a_production_configuration_without_public_base_url_is_warned(settings):
    settings.DEBUG, settings.PUBLIC_BASE_URL = False, ""
    assert "oauth.W001" in _ids()


def test_public_base_url_must_be_an_origin(settings):
    settings.PUBLIC_BASE_URL = "https://platform.example/path"
    assert "oauth.E001" in _ids()
    settings.PUBLIC_BASE_URL = "https://platform.example"
    assert not _ids()
