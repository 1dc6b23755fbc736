import pytest

from tenants.models import ApiToken, Membership, TenantAuditLog
from tenants.scoping import ScopeError

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", [Membership, ApiToken, TenantAuditLog])
@pytest.mark.parametrize(
    "query",
    [
        lambda m: list(m.objects.all()),
        lambda m: m.objects.filter(pk=1).first(),
        lambda m: m.objects.count(),
        lambda m: m.objects.exists(),
        lambda m: m.objects.filter(pk=1).update(pk=1),
        lambda m: m.objects.filter(pk=1).delete(),
        lambda m: m.objects.get(pk=1),
    ],
)
def test_an_unscoped_query_of_tenant_data_fails_loudly(model, query):
    with pytest.raises(ScopeError):
        query(model)


def test_a_scoped_query_sees_only_its_tenant(make_tenant, make_member):
    acme, other = make_tenant("acme"), make_tenant("other")
    make_member(acme, "alice")
    make_member(other, "bob")
    assert [m.user.username for m in Membership.objects.for_tenant(acme)] == ["alice"]
    assert [m.user.username for m in acme.memberships.all()] == ["alice"]
    assert Membership.objects.filter(tenant=other).count() == 1
    assert Membership.all_tenants.count() == 2


def test_excluding_a_tenant_is_not_a_scope(make_tenant):
    acme = make_tenant("acme")
    with pytest.raises(ScopeError):
        list(Membership.objects.exclude(tenant=acme))
