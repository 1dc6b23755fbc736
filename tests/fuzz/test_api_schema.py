"""Schemathesis against the live REST API, from its own OpenAPI schema, as a tenant admin and as a member.

Requests that fit the schema and requests that break it (Schemathesis' positive and negative
modes) go to every operation of ``/api/schema/`` in tenant ``api``. The bar: no 5xx, no trace or
host path in any answer, and the server serving after each case. The fuzzer may delete or demote
the person it acts as, or revoke its own token; each case starts with that person restored.
"""

from __future__ import annotations

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.profile import fuzz_settings
from tests.support import mcp_wire as wire
from tests.support.leaks import leaks

# Collected (and skipped) on a machine without the dev extra's schemathesis.
schemathesis = pytest.importorskip("schemathesis")
# Imported at collection, not lazily inside the first fixture: pytest rewrites a plugin's modules as
# they are imported, with ast.parse, and on CPython 3.11 ast.parse races with any other thread's
# (a live gateway's notifier logging a traceback parses source lines too; gh-106905), which raised
# "SystemError: AST constructor recursion depth mismatch" in CI.
pytest.importorskip("schemathesis.specs.openapi.schemas")
pytest.importorskip("schemathesis.generation.dictionaries")  # imported lazily by the first case drawn
GenerationMode = schemathesis.GenerationMode

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def api_schema(served):
    return schemathesis.openapi.from_url(
        f"{served.base_url}/api/schema/?format=json",
        headers={"Authorization": f"Bearer {served.api_tokens['admin']}"},
        timeout=30,
    )


def cases(api_schema, slug: str) -> st.SearchStrategy:
    fixed = {"path_parameters": {"slug": slug}}
    return st.one_of(
        api_schema.as_strategy(GenerationMode.POSITIVE, **fixed),
        api_schema.as_strategy(GenerationMode.NEGATIVE, **fixed),
    )


def intact(served, session: requests.Session, who: str) -> bool:
    """Whether ``api_<who>`` still holds the seeded membership and a working token.

    Their own member record answers 200 (admin, still an admin) or 403 (a member: known, not allowed);
    401 or 404 means the fuzzer revoked the token or removed the person.
    """
    me = session.get(
        f"{served.base_url}/api/tenants/{served.api_slug}/members/{served.api_prefix}{who}",
        headers={"Authorization": f"Bearer {served.api_tokens[who]}"},
        timeout=30,
    )
    if who == "admin":
        return me.status_code == 200 and me.json().get("is_admin") is True
    return me.status_code in (200, 403)


def token_of(served, session: requests.Session, who: str) -> str:
    """``api_<who>``'s token, restored first when the fuzzer removed, demoted or revoked them."""
    if not intact(served, session, who):
        return served.restore_api_person(who)
    return served.api_tokens[who]


@pytest.mark.parametrize("who", ["admin", "member"])
def test_the_rest_api_answers_generated_requests_cleanly(served, api_schema, who):
    session = requests.Session()

    @fuzz_settings(max_examples=60)
    @given(case=cases(api_schema, served.api_slug))
    def run(case):
        token = token_of(served, session, who)
        response = case.call(
            base_url=served.base_url,
            session=session,
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        sent = f"{case.path_parameters} {case.query} {case.body!r}"
        reproduce = f"\n--- reproduce ---\n{case.as_curl_command()}\n--- answer ---\n{response.text[:1500]}"
        assert response.status_code < 500, f"HTTP {response.status_code}{reproduce}"
        found = leaks(response.text, sent)
        assert not found, f"the answer shows {found}{reproduce}"
        assert served.platform.alive, served.platform.log_tail()
        assert wire.client("check").get(f"{served.base_url}/healthz").status_code == 200

    run()
