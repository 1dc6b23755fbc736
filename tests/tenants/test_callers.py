"""``Caller.credential_key`` and ``person_key``: what "the same credential" and "the same person" mean."""

from __future__ import annotations

from tenants.callers import Caller


def test_a_token_caller_is_keyed_by_its_token_and_a_connection_by_its_grant():
    assert Caller(tenant_id=1, user_id=7, token_id=3).credential_key == "token:3"
    assert Caller(tenant_id=1, user_id=7, oauth_grant_id=5).credential_key == "grant:5"


def test_without_a_token_or_grant_the_credential_is_the_person():
    signed_in = Caller(tenant_id=1, user_id=7, username="alice")
    job = Caller(tenant_id=1, username="job:cases/reindex", is_service=True)

    assert signed_in.credential_key == signed_in.person_key == "user:7"
    assert job.credential_key == job.person_key == "service:job:cases/reindex"
    assert Caller(tenant_id=1).credential_key == "anonymous"


def test_two_credentials_of_one_person_are_two_credentials_and_one_person():
    by_token = Caller(tenant_id=1, user_id=7, token_id=3)
    by_grant = Caller(tenant_id=1, user_id=7, oauth_grant_id=3)

    assert by_token.credential_key != by_grant.credential_key
    assert by_token.person_key == by_grant.person_key == "user:7"
