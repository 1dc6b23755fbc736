"""Factories shared by every test: each fills in what the test does not care about."""

from __future__ import annotations

import itertools

import pytest
from rest_framework.test import APIClient

from tenants import actions
from tenants.models import ApiToken, Membership, Tenant

_seq = itertools.count(1)


@pytest.fixture
def make_tenant(db):
    def make(slug: str | None = None, **kwargs) -> Tenant:
        slug = slug or f"t{next(_seq)}"
        return actions.create_tenant(slug, acting_user=None, **kwargs)

    return make


@pytest.fixture
def make_member(db):
    def make(tenant: Tenant, username: str | None = None, **kwargs) -> Membership:
        return actions.add_member(tenant, username or f"user{next(_seq)}", acting_user=None, **kwargs)

    return make


@pytest.fixture
def make_token(db):
    def make(tenant: Tenant, username: str, **kwargs) -> tuple[ApiToken, str]:
        return actions.issue_token(tenant, username, acting_user=None, **kwargs)

    return make


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()
