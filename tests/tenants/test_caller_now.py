"""``tenants.callers.caller_now``: a stored caller with today's rights, or None once they no longer hold."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from oauth2_provider.models import Application

from oauth.models import Connection
from tenants import actions
from tenants.callers import Caller, caller_for, caller_for_token, caller_now
from tenants.models import ApiToken, Membership
from tenants.scoping import access_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def token_caller(acme, make_token):
    token, raw = make_token(acme, "writer")
    return token, caller_for_token(acme, raw).to_snapshot()


def test_a_snapshot_holds_every_field_but_the_tenant_and_comes_back_the_same():
    caller = Caller(
        tenant_id=3,
        user_id=9,
        username="ann",
        is_member=True,
        roles=frozenset({"b", "a"}),
        oauth_grant_id=4,
        oauth_client_id="client",
        read_only=True,
        agent_name="helper",
        agent_run_id="arun_1",
    )
    data = caller.to_snapshot()
    assert "tenant_id" not in data and data["roles"] == ["a", "b"]
    assert Caller.from_snapshot(3, data) == caller
    assert Caller.from_snapshot(3, {**data, "unknown": 1}) == caller


def test_a_token_caller_gets_the_roles_the_member_holds_now(acme, token_caller):
    token, snapshot = token_caller
    actions.update_member(acme, "writer", roles=["case_reader"], acting_user=None)
    now = caller_now(acme, snapshot)
    assert now is not None and now.roles == frozenset({"case_reader"}) and now.token_id == token.pk


def test_a_member_removed_without_their_token_being_revoked_no_longer_acts(acme, token_caller):
    token, snapshot = token_caller
    Membership.objects.for_tenant(acme).filter(user__username="writer").delete()  # e.g. through /admin/
    assert ApiToken.objects.for_tenant(acme).get(pk=token.pk).revoked_at is None
    assert caller_now(acme, snapshot) is None


@pytest.mark.parametrize(
    "change",
    [
        {"revoked_at": timezone.now()},
        {"expires_at": timezone.now() - timedelta(seconds=1)},
    ],
    ids=["revoked", "expired"],
)
def test_a_token_no_longer_usable_acts_no_more(acme, token_caller, change):
    token, snapshot = token_caller
    ApiToken.all_tenants.filter(pk=token.pk).update(**change)
    assert caller_now(acme, snapshot) is None


def test_a_deactivated_user_acts_no_more(acme, token_caller):
    _, snapshot = token_caller
    get_user_model().objects.filter(username="writer").update(is_active=False)
    assert caller_now(acme, snapshot) is None


def test_a_signed_in_member_is_re_derived_and_a_superuser_needs_no_membership(acme):
    writer = caller_for(acme, access_user("writer")).to_snapshot()
    root = caller_for(acme, access_user("root")).to_snapshot()
    assert caller_now(acme, writer).roles == frozenset({"case_writer"})
    actions.remove_member(acme, "writer", acting_user=None)
    assert caller_now(acme, writer) is None
    assert caller_now(acme, root).is_superuser


def test_service_principals_and_anonymous_callers_come_back_as_stored(acme):
    service = Caller(tenant_id=acme.pk, username="job:chores/nightly", is_member=True, is_service=True)
    anonymous = Caller(tenant_id=acme.pk)
    assert caller_now(acme, service.to_snapshot()) == service
    assert caller_now(acme, anonymous.to_snapshot()) == anonymous


def test_the_agent_tags_stay_on_the_caller_now(acme):
    tagged = Caller(
        tenant_id=acme.pk, user_id=access_user("reader").pk, agent_name="helper", agent_run_id="r1"
    )
    now = caller_now(acme, tagged.to_snapshot())
    assert (now.agent_name, now.agent_run_id, now.roles) == ("helper", "r1", frozenset({"case_reader"}))


def test_an_oauth_grant_acts_until_its_connection_is_revoked(acme):
    application = Application.objects.create(
        name="client",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="https://client.example/cb",
    )
    connection = Connection.objects.create(
        tenant=acme, user=access_user("reader"), application=application, read_only=True
    )
    stored = Caller(
        tenant_id=acme.pk,
        user_id=access_user("reader").pk,
        oauth_grant_id=connection.pk,
        oauth_client_id=application.client_id,
    ).to_snapshot()

    now = caller_now(acme, stored)
    assert now is not None and now.read_only and now.oauth_grant_id == connection.pk
    assert now.roles == frozenset({"case_reader"})

    Connection.all_tenants.filter(pk=connection.pk).update(revoked_at=timezone.now())
    assert caller_now(acme, stored) is None
