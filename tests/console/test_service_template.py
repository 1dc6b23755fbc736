"""The service template's tool reaches its service through the platform (request.http, egress): made
in the console, pointed at a local fake service (as its handler says to change the URL and the egress
entry), and called in the playground as the admin."""

from __future__ import annotations

import json

import pytest

from app_templates import render
from apps_runtime.deploy import deploy_bundle
from apps_runtime.egress import transport
from apps_runtime.manifest import bundle_from_mapping
from apps_runtime.models import OutboundRequest
from tests.support.fake_services import start_fake_service

pytestmark = pytest.mark.django_db
OPEN_METEO = "https://api.open-meteo.com"


@pytest.fixture
def service(settings):
    settings.EGRESS_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    fake = start_fake_service("127.0.0.1")
    yield fake
    fake.close()
    transport.set_resolver(None)


def test_the_service_tool_calls_its_service_with_the_arguments(signed_in, acme, service):
    created = signed_in("admin").post("/console/acme/apps/new", {"template": "service", "name": "weather"})
    assert created.status_code == 302
    files = render("service", "weather")
    manifest = json.loads(files.pop("app.json"))
    assert manifest["egress"] == ["api.open-meteo.com"]
    manifest["egress"] = [service.base]  # the admin's own service, as the handler's docstring says
    files["server/weather.py"] = files["server/weather.py"].replace(OPEN_METEO, service.base)
    deploy_bundle(acme, bundle_from_mapping(manifest, files), acting_user=None)

    body = (
        signed_in("admin")
        .post(
            "/console/acme/apps/weather/playground",
            {"tool": "acme_weather_current_weather", "arg:latitude": "52.5", "arg:longitude": "13.4"},
        )
        .content.decode()
    )
    assert "isError: false" in body and "temperature_c" in body
    (seen,) = service.seen
    assert seen.method == "GET" and seen.path.startswith("/v1/forecast?latitude=52.5&longitude=13.4")
    row = OutboundRequest.objects.for_tenant(acme).get()
    assert (row.method, row.path, row.status) == ("GET", "/v1/forecast", 200)
