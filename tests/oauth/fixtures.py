"""Fixtures of the OAuth tests, shared by tests/oauth and tests/mcp_gateway/oauth (the live ones)."""

import pytest

from tests.oauth.flow import ORIGIN


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """People's passwords with a cheap hasher: sign-in behaves the same, each test saves seconds."""
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "oauth.hashers.ClientSecretHasher",
    ]


@pytest.fixture(autouse=True)
def public_origin(settings):
    """Tests run with DEBUG off, as production does: the origin is configured, not derived."""
    settings.PUBLIC_BASE_URL = ORIGIN
    return ORIGIN


@pytest.fixture
def cimd_server(tmp_path, monkeypatch, settings):
    """An https server on 127.0.0.1 for client ID metadata documents, trusted and allowed."""
    from tests.oauth.cimd_server import document_server

    with document_server(tmp_path) as server:
        monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_file))
        settings.OAUTH_CIMD_ALLOW_LOOPBACK = True
        yield server
