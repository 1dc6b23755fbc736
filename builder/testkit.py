"""The handler test kit: a pytest plugin whose ``app`` fixture runs an app's tools and routes locally.

``lcp test DIR`` runs ``DIR/tests`` with this plugin in a child process whose platform lives in a
scratch directory: its settings, its database (built from the models, thrown away afterwards) and
its sandbox. Each test gets the app deployed afresh into a tenant of its own, by ``deploy_bundle``
(the deploy's whole validation: a bundle the platform would refuse fails the test with its
problems), and calls run through the gateway's own tools/call core (``mcp_gateway.tools.call.calls``:
arguments against ``inputSchema``, confirmation, the route's checks, the sandbox, the result
mapping) or ``apps_runtime.dispatch.run_route``, as a member with the roles the test names.
Records live in that scratch database, one tenant per test, so tests never see each other's.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# The platform's modules are imported inside the functions below: models cannot be imported before
# ``django.setup()``, which runs in ``pytest_configure``, after pytest has imported this plugin.
APP_DIR_VARIABLE = "LCP_APP_DIR"
_tenants = itertools.count(1)


def pytest_configure(config: pytest.Config) -> None:
    """Set the platform up once for the session: Django, then a scratch database built from the models."""
    if APP_DIR_VARIABLE not in os.environ:
        return  # loaded by some other pytest run: stay inert
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    settings.DATABASES["default"].setdefault("TEST", {})["MIGRATE"] = False
    config._lcp_test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)


def pytest_unconfigure(config: pytest.Config) -> None:
    name = getattr(config, "_lcp_test_db", None)
    if name is not None:
        from django.db import connection

        connection.creation.destroy_test_db(name, verbosity=0)


@dataclass(frozen=True)
class ToolResult:
    """A tools/call result as an MCP client gets it."""

    is_error: bool
    text: str
    structured: Any

    @property
    def data(self) -> Any:
        """The structured result, else the text read as JSON (else the text itself)."""
        if self.structured is not None:
            return self.structured
        try:
            return json.loads(self.text)
        except ValueError:
            return self.text


@dataclass(frozen=True)
class RouteAnswer:
    """A route's answer as the app's front-end path gets it; ``error_id`` for a handler that failed."""

    status: int
    body: Any
    logs: str
    error_id: str | None


class LocalApp:
    """The app of ``LCP_APP_DIR``, deployed into a tenant of its own for one test."""

    def __init__(self, folder: Path):
        from apps_runtime.deploy import deploy_bundle
        from apps_runtime.manifest import DeployRejected, read_bundle
        from tenants.actions import create_tenant

        self.tenant = create_tenant(f"lcp-test-{next(_tenants)}", acting_user=None)
        try:
            self.deployed = deploy_bundle(self.tenant, read_bundle(folder), acting_user=None)
        except DeployRejected as rejected:
            lines = "\n".join(str(p) for p in rejected.problems)
            pytest.fail(f"the platform would refuse this app:\n{lines}", pytrace=False)
        self.name = self.deployed.app.name
        self.wire_names = dict(self.deployed.tools)  # tool name -> wire name
        self.warnings = [str(w) for w in self.deployed.warnings]

    def caller(self, user: str | None, roles: list[str] | tuple[str, ...] = (), *, admin: bool = False):
        """The caller ``user`` is as a member with ``roles`` (None: an anonymous caller)."""
        from django.contrib.auth import get_user_model

        from tenants.actions import add_member
        from tenants.callers import anonymous_caller, caller_for

        if user is None:
            return anonymous_caller(self.tenant)
        add_member(self.tenant, user, roles=list(roles), admin=admin, acting_user=None)
        return caller_for(self.tenant, get_user_model().objects.get(username=user))

    def call_tool(
        self,
        tool: str,
        arguments: dict | None = None,
        *,
        user: str | None = "tester",
        roles: list[str] | tuple[str, ...] = (),
        admin: bool = False,
        confirm: bool | None = None,
    ) -> ToolResult:
        """Call ``tool`` (its name in app.json, or its wire name) as ``user`` with ``roles``.

        ``confirm``: the user's answer when the tool asks first (``"confirm": true``); None: nobody
        answers, so such a tool is refused as for a client that cannot ask.
        """
        from mcp_gateway.tools.call.calls import call_tool
        from mcp_gateway.tools.call.confirmation import Confirmation, Verdict

        wire = self.wire_names.get(tool, tool)
        answer = None if confirm is None else Confirmation(Verdict.ACCEPTED if confirm else Verdict.DECLINED)
        result = call_tool(self.tenant, self.caller(user, roles, admin=admin), wire, arguments or {}, answer)
        text = "\n".join(block.text for block in result.content if block.type == "text")
        return ToolResult(bool(result.is_error), text, result.structured_content)

    def call_route(
        self,
        route: str,
        *,
        params: dict | None = None,
        body: dict | None = None,
        query: dict | None = None,
        user: str | None = "tester",
        roles: list[str] | tuple[str, ...] = (),
        admin: bool = False,
    ) -> RouteAnswer:
        """Run the route whose key is ``route`` (``"GET /items/{item_id}"``) as ``user`` with ``roles``."""
        from apps_runtime.dispatch import RouteCall, load_app, run_route

        loaded = load_app(self.tenant, self.name)
        found = loaded.compiled.routes.by_key[route]
        caller = self.caller(user, roles, admin=admin)
        result = run_route(RouteCall(loaded, found, caller, body=body, query=query, params=params))
        return RouteAnswer(result.status, result.body, result.logs, result.error_id)

    def records(self, collection: str) -> list[dict]:
        """Every record of ``collection`` of this test's tenant, oldest first: ``{"id", **data}``."""
        from apps_runtime.models import Record

        rows = Record.objects.for_tenant(self.tenant).filter(app__name=self.name, collection=collection)
        return [{"id": row.record_id, **row.data} for row in rows.order_by("created_at", "pk")]

    def runs(self) -> list[dict]:
        """The background runs the app's handlers queued (``request.enqueue``), oldest first: their
        route, body, status and error id (without a broker they run at once, in this process)."""
        from apps_runtime.models import JobRun

        rows = JobRun.objects.for_tenant(self.tenant).order_by("enqueued_at", "pk")
        return [
            {"route": r.route_key, "body": r.body, "status": r.status, "error_id": r.error_id or None}
            for r in rows
        ]

    def error(self, error_id: str) -> dict:
        """A failed call's record: ``kind``, ``trace`` (the app's own frames) and ``logs``."""
        from apps_runtime.models import HandlerError

        found = HandlerError.objects.for_tenant(self.tenant).get(error_id=error_id)
        return {"kind": found.kind, "trace": found.trace, "logs": found.logs}


@pytest.fixture
def app() -> LocalApp:
    """The app under test, freshly deployed into a scratch tenant of its own."""
    return LocalApp(Path(os.environ[APP_DIR_VARIABLE]))
