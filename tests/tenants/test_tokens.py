from datetime import timedelta

import pytest
from django.utils import timezone

from tenants import actions
from tenants.exceptions import InvalidToken
from tenants.models import ApiToken
from tenants.tokens import hash_secret, parse_token, verify_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(make_tenant, make_member):
    tenant = make_tenant("acme")
    make_member(tenant, "alice")
    return tenant


def test_a_token_is_stored_only_as_a_hash(alice, make_token):
    token, raw = make_token(alice, "alice")
    key_id, secret = parse_token(raw)
    row = ApiToken.all_tenants.get(pk=token.pk)
    assert row.key_id == key_id
    assert row.secret_hash == hash_secret(secret)
    assert secret not in str(row.__dict__)
    assert len(secret) >= 43  # 32 random bytes, base64


def test_verify_accepts_the_issued_token_and_records_use(alice, make_token):
    _, raw = make_token(alice, "alice")
    token = verify_token(raw)
    assert token.user.username == "alice" and token.tenant == alice
    assert ApiToken.all_tenants.get(pk=token.pk).last_used_at is not None


@pytest.mark.parametrize("raw", ["", "Bearer x", "lcp_", "lcp_abc", "lcp__secret", "ghp_abc_def"])
def test_verify_refuses_malformed_tokens(raw):
    with pytest.raises(InvalidToken):
        verify_token(raw)


def test_verify_refuses_a_wrong_secret(alice, make_token):
    _, raw = make_token(alice, "alice")
    with pytest.raises(InvalidToken, match="unknown"):
        verify_token(raw[:-2] + ("AA" if not raw.endswith("AA") else "BB"))


def test_verify_refuses_an_expired_token(alice, make_token):
    token, raw = make_token(alice, "alice", expires_days=1)
    ApiToken.all_tenants.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(InvalidToken, match="expired"):
        verify_token(raw)


def test_verify_refuses_a_revoked_token(alice, make_token):
    token, raw = make_token(alice, "alice")
    actions.revoke_token(token, acting_user=None)
    with pytest.raises(InvalidToken, match="revoked"):
        verify_token(raw)


def test_removing_a_member_revokes_their_tokens(alice, make_token):
    _, raw = make_token(alice, "alice")
    actions.remove_member(alice, "alice", acting_user=None)
    with pytest.raises(InvalidToken, match="revoked"):
        verify_token(raw)
