"""``core.challenges.bearer_challenge``: every WWW-Authenticate value, and the surfaces using it."""

from __future__ import annotations

import pytest

from core.challenges import bearer_challenge


def test_the_params_come_in_one_order_each_quoted():
    assert bearer_challenge() == "Bearer"
    assert bearer_challenge(realm="api") == 'Bearer realm="api"'
    assert bearer_challenge(
        resource_metadata="https://p.example/m", error="invalid_token", error_description="No token."
    ) == (
        'Bearer error="invalid_token", error_description="No token.", resource_metadata="https://p.example/m"'
    )


def test_quotes_and_backslashes_in_a_description_cannot_end_the_quoted_string():
    assert (
        bearer_challenge(error_description='say "hi" \\ bye')
        == r'Bearer error_description="say \"hi\" \\ bye"'
    )


@pytest.mark.django_db
def test_the_rest_api_and_the_apps_front_end_challenge_through_it(client, acme, deploy):
    deploy(acme)
    assert client.get("/api/tenants/acme/settings")["WWW-Authenticate"] == bearer_challenge(realm="api")
    front_end = client.get("/t/acme/apps/cases/cases/search?query=ada")
    assert front_end.status_code == 401
    assert front_end["WWW-Authenticate"] == bearer_challenge(realm="apps")
