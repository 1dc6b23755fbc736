"""One membership and tenant-admin rule (``tenants.authority.standing``), as every surface applies it:
the REST API, the console, the actions, connections and agent runs agree for each kind of user."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from tenants.authority import is_tenant_admin, is_tenant_member, require_tenant_admin, standing
from tenants.callers import caller_for
from tenants.exceptions import NotAllowed

pytestmark = pytest.mark.django_db

# user -> (may open the tenant, may change it)
STANDINGS = {
    "reader": (True, False),  # a member with roles
    "member": (True, False),  # a member without roles
    "admin": (True, True),  # a tenant admin
    "root": (True, True),  # a platform superuser (here also a member)
    "outsider": (False, False),  # an admin of another tenant only
    "operator": (True, True),  # a platform superuser who belongs to no tenant
}


@pytest.fixture
def users(acme, make_tenant, make_member):
    make_member(make_tenant("other"), "outsider", admin=True)
    get_user_model().objects.create_superuser("operator", password=None)
    return {name: get_user_model().objects.get(username=name) for name in STANDINGS}


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("name", STANDINGS)
def test_the_api_and_the_console_apply_one_member_and_admin_rule(users, name):
    member, admin = STANDINGS[name]
    client = signed_in(users[name])
    # Member pages: the connections list (API) and the member's own tokens page (console).
    assert (client.get("/api/tenants/acme/connections").status_code == 200) is member
    assert (client.get("/console/acme/tokens/").status_code == 200) is member
    # Admin pages: tenant settings (API) and the console's settings page.
    assert (client.get("/api/tenants/acme/settings").status_code == 200) is admin
    assert (client.get("/console/acme/settings/").status_code == 200) is admin


@pytest.mark.parametrize("name", STANDINGS)
def test_the_predicates_the_actions_and_the_caller_agree_with_the_surfaces(acme, users, name):
    member, admin = STANDINGS[name]
    user = users[name]
    assert (is_tenant_member(acme, user), is_tenant_admin(acme, user)) == (member, admin)
    assert caller_for(acme, user).is_tenant_admin is admin
    if admin:
        require_tenant_admin(acme, user)
    else:
        with pytest.raises(NotAllowed):
            require_tenant_admin(acme, user)


def test_the_shell_operator_may_do_anything_and_an_anonymous_visitor_nothing(acme):
    assert standing(acme, None).is_admin
    nobody = standing(acme, AnonymousUser())
    assert not nobody.is_member and not nobody.is_admin


def test_one_query_decides_a_console_page(acme, users, django_assert_num_queries):
    with django_assert_num_queries(1):
        found = standing(acme, users["admin"])
    assert found.membership is not None and found.is_admin
