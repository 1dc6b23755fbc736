"""The listen-stream ledger: caps per credential, member and tenant with the real wait, and which
credentials are still good."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest
from django.utils import timezone

from mcp_gateway.protocol.listen_streams import StreamLedger, StreamLimits, TooManyStreams, live_credentials
from tenants import actions
from tenants.callers import Caller

LIMITS = StreamLimits(per_token=2, per_member=3, per_tenant=4, lifetime_s=600)


def caller(user: int, token: int) -> Caller:
    return Caller(tenant_id=1, user_id=user, username=f"u{user}", is_member=True, token_id=token)


def test_each_cap_refuses_the_next_stream_naming_its_scope_and_the_wait():
    async def main():
        ledger = StreamLedger()
        for _ in range(2):
            ledger.open(1, caller(1, 10), LIMITS)
        with pytest.raises(TooManyStreams) as by_token:
            ledger.open(1, caller(1, 10), LIMITS)
        ledger.open(1, caller(1, 11), LIMITS)  # the member's other token
        with pytest.raises(TooManyStreams) as by_member:
            ledger.open(1, caller(1, 11), LIMITS)
        ledger.open(1, caller(2, 20), LIMITS)
        with pytest.raises(TooManyStreams) as by_tenant:
            ledger.open(1, caller(3, 30), LIMITS)
        ledger.open(2, caller(3, 30), LIMITS)  # another tenant counts on its own
        return ledger, by_token.value, by_member.value, by_tenant.value

    ledger, by_token, by_member, by_tenant = anyio.run(main)
    assert [e.data["limit"] for e in (by_token, by_member, by_tenant)] == ["token", "member", "tenant"]
    assert all(590 <= e.data["retryAfter"] <= 600 for e in (by_token, by_member, by_tenant))
    assert ledger.count(1) == 4 and ledger.count(2) == 1 and ledger.count() == 5


def test_a_closed_stream_frees_its_place():
    async def main():
        ledger = StreamLedger()
        first = ledger.open(1, caller(1, 10), LIMITS)
        ledger.open(1, caller(1, 10), LIMITS)
        ledger.close(first)
        ledger.close(first)  # idempotent
        return ledger.open(1, caller(1, 10), LIMITS), ledger.count(1)

    assert anyio.run(main)[1] == 2


def test_only_a_checked_credential_found_dead_ends_its_stream_not_one_opened_during_the_check():
    async def main():
        ledger = StreamLedger()
        kept = ledger.open(1, caller(1, 10), LIMITS)
        revoked = ledger.open(1, caller(2, 20), LIMITS)
        checked = ledger.credentials()
        # Opened while the check was in its thread: its token was not asked about.
        newcomer = ledger.open(1, caller(3, 30), LIMITS)
        ledger.end_revoked(checked, ({10}, set()))
        return kept.ending, revoked.ending, newcomer.ending

    assert anyio.run(main) == (None, "revoked", None)


@pytest.mark.django_db
def test_only_unrevoked_unexpired_tokens_of_active_users_are_live(acme):
    kept, _ = actions.issue_token(acme, "reader", acting_user=None)
    revoked, _ = actions.issue_token(acme, "reader", acting_user=None)
    expired, _ = actions.issue_token(acme, "reader", acting_user=None)
    inactive, _ = actions.issue_token(acme, "writer", acting_user=None)
    actions.revoke_token(revoked, acting_user=None)
    type(expired).all_tenants.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    type(inactive.user).objects.filter(pk=inactive.user_id).update(is_active=False)
    tokens, grants = live_credentials({kept.pk, revoked.pk, expired.pk, inactive.pk}, {123456})
    assert tokens == {kept.pk} and grants == set()
