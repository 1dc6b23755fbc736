"""Where screens' documents may be served: SCREENS_ORIGIN on another site than the platform."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from apps_runtime.checks import check_screens_origin
from apps_runtime.screen_documents import site_of
from apps_runtime.screens import SDK_PATH


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://a.b.example.co.uk", "example.co.uk"),
        ("https://screens.platform.example.com:8443", "example.com"),
        ("https://tenant-x.github.io", "tenant-x.github.io"),  # a public suffix of its own
        ("http://127.0.0.1:8000", "127.0.0.1"),
        ("http://localhost:8000", "localhost"),
    ],
)
def test_the_site_of_an_origin_is_its_registrable_domain(url, site):
    assert site_of(url) == site


def ids(settings, screens: str, platform: str = "https://platform.example.com") -> list[str]:
    settings.SCREENS_ORIGIN, settings.PUBLIC_BASE_URL = screens, platform
    return [error.id for error in check_screens_origin(None)]


def test_screens_origin_must_be_another_site_than_the_platform(settings):
    assert ids(settings, "") == []
    assert ids(settings, "https://usercontent.example.net") == []
    assert ids(settings, "https://screens.platform.example.com") == ["apps_runtime.E004"]
    assert ids(settings, "https://example.com") == ["apps_runtime.E004"]
    assert ids(settings, "https://usercontent.example.net", platform="") == ["apps_runtime.E003"]
    assert ids(settings, "https://usercontent.example.net/path") == ["apps_runtime.E002"]
    assert ids(settings, "ftp://usercontent.example.net") == ["apps_runtime.E002"]


@pytest.mark.django_db
def test_the_screens_host_serves_screens_documents_and_the_sdk_only(client, settings):
    settings.SCREENS_ORIGIN, settings.PUBLIC_BASE_URL = "https://usercontent.test", "https://platform.test"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "usercontent.test"]
    on_screens = {"HTTP_HOST": "usercontent.test", "secure": True}
    for path in (
        "/console/",
        "/accounts/login/",
        "/api/tenants/",
        "/t/acme/apps/cases/_screens/card",
        "/admin/",
    ):
        assert client.get(path, **on_screens).status_code == 404, path
    assert client.get(SDK_PATH, **on_screens).status_code == 200
    # A document link reaches its view (which wants a grant): the host lets it through.
    assert client.get("/t/acme/apps/cases/_screens/card/document", **on_screens).status_code == 403
    assert client.get("/accounts/login/").status_code == 200  # the platform's own host is untouched


def test_serve_refuses_to_start_with_screens_on_the_platforms_site(settings):
    settings.SCREENS_ORIGIN = "https://screens.platform.example.com"
    settings.PUBLIC_BASE_URL = "https://platform.example.com"
    with pytest.raises(CommandError, match="apps_runtime.E004"):
        call_command("serve", "--port", "1")  # refused before uvicorn starts
