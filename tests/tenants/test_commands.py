import os
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tenants.models import ApiToken, Membership, Tenant
from tenants.tokens import verify_token
from tests.support.platform_process import migrated_database

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_tenant_defaults_the_prefix_to_the_slug_with_underscores():
    run("create_tenant", "big-co", "--name", "Big Co")
    tenant = Tenant.objects.get(slug="big-co")
    assert (tenant.mcp_prefix, tenant.name) == ("big_co", "Big Co")


def test_create_tenant_takes_an_explicit_prefix():
    run("create_tenant", "acme", "--prefix", "ac")
    assert Tenant.objects.get(slug="acme").mcp_prefix == "ac"


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["Bad_Slug"], "Bad_Slug"),
        (["ok", "--prefix", "9x"], "9x"),
        (["ok", "--prefix", "x" * 21], "x" * 21),
    ],
)
def test_create_tenant_refuses_bad_values_and_names_them(args, culprit):
    with pytest.raises(CommandError, match=culprit):
        run("create_tenant", *args)
    assert not Tenant.objects.exists()


def test_create_tenant_refuses_a_taken_slug_or_prefix(make_tenant):
    make_tenant("acme")
    with pytest.raises(CommandError, match="slug 'acme'"):
        run("create_tenant", "acme", "--prefix", "other")
    with pytest.raises(CommandError, match="prefix 'acme'"):
        run("create_tenant", "acme2", "--prefix", "acme")
    assert Tenant.objects.count() == 1


def test_add_member_creates_the_user_with_roles(make_tenant):
    tenant = make_tenant("acme")
    out = run("add_member", "acme", "alice", "--roles", "case_reader,case_writer", "--admin")
    membership = Membership.objects.for_tenant(tenant).get(user__username="alice")
    assert membership.roles == ["case_reader", "case_writer"]
    assert membership.is_admin
    assert "alice" in out


def test_add_member_reads_a_roles_list_with_spaces_as_the_console_and_the_api_do(make_tenant):
    tenant = make_tenant("acme")
    run("add_member", "acme", "alice", "--roles", " case_reader, case_writer ")
    assert Membership.objects.for_tenant(tenant).get().roles == ["case_reader", "case_writer"]


def test_add_member_again_replaces_roles(make_tenant):
    tenant = make_tenant("acme")
    run("add_member", "acme", "alice", "--roles", "a")
    run("add_member", "acme", "alice", "--roles", "b")
    assert Membership.objects.for_tenant(tenant).get().roles == ["b"]


def test_add_member_superuser_flag(make_tenant):
    make_tenant("acme")
    run("add_member", "acme", "root", "--superuser")
    assert Membership.objects.for_tenant(Tenant.objects.get()).get().user.is_superuser


def test_add_member_refuses_unknown_tenant_and_bad_roles(make_tenant):
    with pytest.raises(CommandError, match="unknown tenant 'nope'"):
        run("add_member", "nope", "alice")
    tenant = make_tenant("acme")
    with pytest.raises(CommandError, match="Bad-Role"):
        run("add_member", "acme", "alice", "--roles", "ok,Bad-Role")
    assert not Membership.objects.for_tenant(tenant).exists()


def test_issue_token_prints_only_a_working_token(make_tenant, make_member):
    tenant = make_tenant("acme")
    make_member(tenant, "alice")
    out = run("issue_token", "acme", "alice", "--name", "laptop", "--read-only", "--expires-days", "3")
    raw = out.strip()
    assert out == raw + "\n" and raw.startswith("lcp_")
    token = verify_token(raw)
    assert (token.name, token.read_only, token.user.username) == ("laptop", True, "alice")
    assert token.expires_at is not None


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["nope", "alice"], "nope"),
        (["acme", "ghost"], "ghost"),
        (["acme", "bob"], "bob"),
        (["acme", "alice", "--expires-days", "0"], "expires-days"),
        (["acme", "alice", "--expires-days", "3651"], "expires-days"),
        (["acme", "alice", "--expires-days", "1000000000000"], "expires-days"),
    ],
)
def test_issue_token_refuses_bad_input(make_tenant, make_member, args, culprit):
    tenant = make_tenant("acme")
    make_member(tenant, "alice")
    other = make_tenant("other")
    make_member(other, "bob")
    with pytest.raises(CommandError, match=culprit):
        run("issue_token", *args)
    assert not ApiToken.all_tenants.exists()


def test_tenant_setting_lists_reads_and_sets(make_tenant):
    tenant = make_tenant("acme")
    assert run("tenant_setting", "acme") == (
        "agentRunsPerDay 100\nagentTokensPerDay 1000000\ncodeMode true\n"
        "confirmDestructiveTools true\ncustomAppsMcpTools true\nmaxOutputTokens 20000\nmcpServer true\n"
        "toolDiscovery list\ntoolRateLimit null\n"
    )
    assert run("tenant_setting", "acme", "mcpServer", "false") == "mcpServer false\n"
    assert run("tenant_setting", "acme", "mcpServer") == "mcpServer false\n"
    tenant.refresh_from_db()
    assert tenant.setting("mcpServer") is False
    assert tenant.setting("customAppsMcpTools") is True


def test_tenant_setting_sets_an_integer_setting_within_its_range(make_tenant):
    make_tenant("acme")
    assert run("tenant_setting", "acme", "maxOutputTokens", "5000") == "maxOutputTokens 5000\n"
    for bad in ("true", "5e3", "99", "abc"):
        with pytest.raises(CommandError, match="use an integer from 100 to 1000000"):
            run("tenant_setting", "acme", "maxOutputTokens", bad)


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["nope"], "nope"),
        (["acme", "bogus"], "bogus"),
        (["acme", "mcpServer", "maybe"], "maybe"),
        (["acme", "mcpServer", "yes"], "'yes'"),
        (["acme", "mcpServer", "0"], "'0'"),
        (["acme", "mcpServer", '"true"'], "'\"true\"'"),
    ],
)
def test_tenant_setting_refuses_bad_input(make_tenant, args, culprit):
    tenant = make_tenant("acme")
    with pytest.raises(CommandError, match=culprit):
        run("tenant_setting", *args)
    tenant.refresh_from_db()
    assert tenant.settings == {}


@pytest.mark.slow
def test_commands_exit_non_zero_with_one_line_on_stderr(tmp_path):
    # A copy of the run's migrated template (tests/support/platform_process.py), not a `migrate` of
    # its own: that subprocess alone cost 8.5 s of CPU, and migrating is not what this test checks.
    database = migrated_database(tmp_path)
    env = {**os.environ, "DEBUG": "true", "DATABASE_URL": database.url}

    def manage(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args], capture_output=True, text=True, env=env, check=False
        )

    try:
        assert manage("create_tenant", "acme").returncode == 0
        bad = manage("tenant_setting", "acme", "mcpServer", "maybe")
        missing = manage("issue_token", "nope", "alice")
    finally:
        database.drop()
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == [
        "CommandError: mcpServer 'maybe' is invalid: use true or false"
    ]
    assert (missing.returncode, missing.stdout) == (1, "")
