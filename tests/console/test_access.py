"""Who may open which console page: admins everything, members their own pages, others nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tenants import actions

pytestmark = pytest.mark.django_db

ADMIN_PAGES = ["apps/", "tools/", "preview/", "settings/", "members/", "audit/", "errors/", "runs/"]
MEMBER_PAGES = ["tokens/", "connections/", "connect/"]
ALL_PAGES = ADMIN_PAGES + MEMBER_PAGES


@pytest.mark.parametrize("path", ALL_PAGES)
def test_tenant_admins_open_every_page(signed_in, path):
    response = signed_in("admin").get(f"/console/acme/{path}")
    assert response.status_code == 200
    assert b"<h1>" in response.content


@pytest.mark.parametrize("path", ALL_PAGES)
def test_platform_superusers_open_every_page_of_a_tenant_they_do_not_belong_to(signed_in, make_tenant, path):
    make_tenant("other")
    assert signed_in("root").get(f"/console/other/{path}").status_code == 200


@pytest.mark.parametrize("path", MEMBER_PAGES)
def test_plain_members_open_their_own_pages(signed_in, path):
    assert signed_in("reader").get(f"/console/acme/{path}").status_code == 200


@pytest.mark.parametrize("path", ADMIN_PAGES)
def test_plain_members_get_the_same_404_on_admin_pages_as_for_a_missing_tenant(signed_in, path):
    client = signed_in("reader")
    forbidden = client.get(f"/console/acme/{path}")
    missing = client.get(f"/console/ghost/{path}")
    assert forbidden.status_code == missing.status_code == 404
    assert forbidden.content == missing.content


@pytest.mark.parametrize("path", ALL_PAGES)
def test_users_of_other_tenants_get_404_everywhere(signed_in, make_tenant, make_member, path):
    other = make_tenant("other")
    make_member(other, "stranger", admin=True)
    assert signed_in("stranger").get(f"/console/acme/{path}").status_code == 404


@pytest.mark.parametrize("path", ["", "acme/", *[f"acme/{p}" for p in ALL_PAGES]])
def test_anonymous_visitors_are_sent_to_sign_in(client, acme, path):
    response = client.get(f"/console/{path}")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/console/")


def test_the_index_lists_only_the_tenants_a_user_belongs_to(signed_in, make_tenant, make_member):
    other = make_tenant("other", name="Other Org")
    make_member(other, "reader")
    make_tenant("hidden", name="Hidden Org")
    body = signed_in("reader").get("/console/").content.decode()
    assert "/console/acme/" in body and "/console/other/" in body
    assert "Hidden Org" not in body


def test_the_index_lists_every_tenant_for_superusers(signed_in, make_tenant):
    make_tenant("hidden", name="Hidden Org")
    assert "Hidden Org" in signed_in("root").get("/console/").content.decode()


def test_the_tenant_home_sends_admins_to_apps_and_members_to_connect(signed_in):
    assert signed_in("admin").get("/console/acme/")["Location"] == "/console/acme/apps/"
    assert signed_in("reader").get("/console/acme/")["Location"] == "/console/acme/connect/"


def test_members_see_only_the_navigation_they_may_follow(signed_in):
    body = signed_in("reader").get("/console/acme/connect/").content.decode()
    assert 'href="/console/acme/tokens/"' in body
    assert 'href="/console/acme/apps/"' not in body
    assert 'href="/console/acme/apps/"' in signed_in("admin").get("/console/acme/connect/").content.decode()


def test_an_admin_who_loses_the_admin_flag_loses_the_admin_pages_at_once(signed_in, acme):
    client = signed_in("admin")
    assert client.get("/console/acme/apps/").status_code == 200
    actions.update_member(acme, "admin", admin=False, acting_user=None)
    assert client.get("/console/acme/apps/").status_code == 404


def test_a_deactivated_user_is_signed_out(signed_in):
    client = signed_in("admin")
    get_user_model().objects.filter(username="admin").update(is_active=False)
    assert client.get("/console/acme/apps/").status_code == 302


def test_pages_carry_their_stylesheet_inline_so_no_static_files_server_is_needed(signed_in):
    body = signed_in("admin").get("/console/acme/apps/").content.decode()
    assert "<style>" in body and "--accent:" in body


def test_the_index_names_a_superuser_as_such_even_when_a_member(signed_in, acme):
    body = signed_in("root").get("/console/").content.decode()
    assert "platform superuser" in body and ">member<" not in body


def test_with_debug_on_a_member_on_an_admin_page_gets_the_consoles_404_not_djangos(signed_in, settings):
    settings.DEBUG = True
    response = signed_in("reader").get("/console/acme/apps/")
    assert response.status_code == 404
    body = response.content.decode()
    assert "not open to you" in body and "URLconf" not in body
