"""The request path's prepared lookups load exactly what the ORM loads, on every thread."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connections
from django.utils import timezone

from tenants import actions
from tenants.callers import caller_for_token
from tenants.exceptions import InvalidToken
from tenants.lookups import tenant_by_slug, tenant_with_token, token_with_user
from tenants.models import ApiToken, Tenant


def concrete_values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in instance._meta.concrete_fields}


@pytest.mark.django_db
def test_a_tenant_is_loaded_field_for_field_as_the_orm_loads_it(make_tenant):
    tenant = make_tenant("lookups", name="Look Ups")
    actions.set_tenant_setting(tenant, "customAppsMcpTools", False, acting_user=None)

    found = tenant_by_slug("lookups")

    assert concrete_values(found) == concrete_values(Tenant.objects.get(slug="lookups"))
    assert found.setting("customAppsMcpTools") is False
    assert found.state_key == Tenant.objects.get(slug="lookups").state_key
    assert tenant_by_slug("nobody") is None


@pytest.mark.django_db
def test_a_token_is_loaded_field_for_field_with_the_users_identity(acme, make_token):
    row, raw = make_token(acme, "writer", read_only=True, expires_days=3)
    ApiToken.all_tenants.filter(pk=row.pk).update(last_used_at=timezone.now() - timedelta(hours=1))

    found = token_with_user(row.key_id)

    orm = ApiToken.all_tenants.select_related("user").get(pk=row.pk)
    assert concrete_values(found) == concrete_values(orm)
    assert (found.user.pk, found.user.get_username(), found.user.is_active, found.user.is_superuser) == (
        orm.user.pk,
        "writer",
        True,
        False,
    )
    assert token_with_user("000000000000") is None


@pytest.mark.django_db
def test_a_superusers_token_carries_the_flag(acme, make_token):
    row, _ = make_token(acme, "root")

    assert token_with_user(row.key_id).user.is_superuser is True


def test_each_thread_compiles_its_own_lookup_and_finds_the_same_rows(transactional_db, acme, make_token):
    rows = {name: make_token(acme, name)[0] for name in ("reader", "writer", "admin")}
    found: dict[str, list[str]] = {}

    def look(label: str) -> None:
        try:
            found[label] = [token_with_user(row.key_id).user.get_username() for row in rows.values()]
        finally:
            connections.close_all()

    threads = [threading.Thread(target=look, args=(f"t{n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert found == {f"t{n}": ["reader", "writer", "admin"] for n in range(3)}


@pytest.mark.django_db
def test_a_cached_caller_takes_one_query(acme, make_token, django_assert_num_queries):
    _, raw = make_token(acme, "reader")
    caller_for_token(acme, raw)  # the first use also notes last_used_at and reads the membership

    with django_assert_num_queries(1):
        caller = caller_for_token(acme, raw)

    assert (caller.username, caller.roles, caller.is_member) == ("reader", frozenset({"case_reader"}), True)


@pytest.mark.django_db
def test_a_cached_caller_is_not_reused_after_a_role_change(acme, make_token):
    _, raw = make_token(acme, "reader")
    caller_for_token(acme, raw)

    actions.update_member(acme, "reader", roles=["case_writer"], acting_user=None)
    acme.refresh_from_db()

    assert caller_for_token(acme, raw).roles == frozenset({"case_writer"})


@pytest.mark.django_db
def test_a_user_made_inactive_is_refused_though_cached(acme, make_token):
    _, raw = make_token(acme, "reader")
    caller_for_token(acme, raw)
    get_user_model().objects.filter(username="reader").update(is_active=False)

    with pytest.raises(InvalidToken):
        caller_for_token(acme, raw)


@pytest.mark.django_db
def test_a_lookup_keyed_by_an_int_and_a_uuid_finds_its_row_on_this_database(acme, make_member):
    from oauth2_provider.models import get_application_model

    from oauth.models import Connection
    from tenants.lookups import PreparedLookup, attnames

    application = get_application_model().objects.create(
        client_id="lookups", client_type="public", authorization_grant_type="authorization-code"
    )
    user = make_member(acme, "connected").user
    mine = Connection.objects.create(tenant=acme, user=user, application=application)
    lookup = PreparedLookup(
        lambda tenant_id, family: Connection.objects.for_tenant(tenant_id).filter(token_family=family),
        attnames(Connection),
        key_types=(int, uuid.UUID),
    )

    assert lookup.row(acme.pk, mine.token_family)["id"] == mine.pk
    assert lookup.row(acme.pk + 1, mine.token_family) is None
    assert lookup.row(acme.pk, uuid.uuid4()) is None


@pytest.mark.django_db
def test_the_tenant_and_its_token_are_read_together_as_the_orm_loads_them(acme, make_tenant, make_token):
    row, _ = make_token(acme, "writer", read_only=True, expires_days=3)
    make_tenant("other")

    tenant, token = tenant_with_token("acme", row.key_id)

    assert concrete_values(tenant) == concrete_values(Tenant.objects.get(slug="acme"))
    assert concrete_values(token) == concrete_values(ApiToken.all_tenants.get(pk=row.pk))
    assert (token.user.get_username(), token.user.is_active) == ("writer", True)
    assert tenant_with_token("other", row.key_id) == (Tenant.objects.get(slug="other"), None)
    assert tenant_with_token("acme", "000000000000") == (tenant, None)
    assert tenant_with_token("nobody", row.key_id) == (None, None)
