"""Production HTTP behaviour: static files with DEBUG off, HTTPS settings from the environment."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def collected(settings, tmp_path) -> Path:
    """``collectstatic`` into a scratch STATIC_ROOT, as an operator runs it once per release."""
    settings.STATIC_ROOT = tmp_path / "static"
    call_command("collectstatic", "--noinput", stdout=StringIO())
    return settings.STATIC_ROOT


def test_with_debug_off_the_admin_stylesheet_is_served_after_collectstatic(collected, settings):
    settings.DEBUG = False
    response = Client().get("/static/admin/css/base.css")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/css")
    assert b"".join(response.streaming_content).startswith(b"/*")


def test_with_debug_off_a_static_file_that_was_never_collected_is_a_404(collected, settings):
    settings.DEBUG = False
    assert Client().get("/static/admin/css/no-such-file.css").status_code == 404


def test_the_admin_login_page_links_the_stylesheet_that_is_served(collected, settings):
    settings.DEBUG = False
    page = Client().get("/admin/login/").content.decode()
    assert 'href="/static/admin/css/base.css"' in page


def test_hsts_and_the_https_redirect_follow_the_settings_behind_a_tls_proxy(settings):
    settings.DEBUG = False
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    plain = Client().get("/accounts/login/")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    secure = Client().get("/accounts/login/", headers={"X-Forwarded-Proto": "https"})
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=31536000"


@pytest.mark.django_db
def test_the_load_balancers_health_check_is_never_redirected_to_https(settings):
    settings.SECURE_SSL_REDIRECT = True
    assert Client().get("/healthz").status_code == 200


def _settings_value(name: str, **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SECURE_", "SESSION_", "CSRF_"))}
    code = f"from lowcode_platform import settings; print(repr(settings.{name}))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**base, "DEBUG": "true", "PUBLIC_BASE_URL": "", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
def test_cookies_are_secure_when_the_public_origin_is_https_and_the_environment_can_say_otherwise():
    assert _settings_value("SESSION_COOKIE_SECURE") == "False"
    assert _settings_value("SESSION_COOKIE_SECURE", PUBLIC_BASE_URL="https://p.example") == "True"
    assert _settings_value("CSRF_COOKIE_SECURE", PUBLIC_BASE_URL="https://p.example") == "True"
    assert _settings_value("CSRF_COOKIE_SECURE", CSRF_COOKIE_SECURE="false") == "False"
    assert _settings_value("SECURE_HSTS_SECONDS", SECURE_HSTS_SECONDS="600") == "600"
