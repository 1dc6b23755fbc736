"""A new app from a template: the form's rows of fields, and the app rendered and deployed as version 1.

The files come from ``app_templates`` (the generator ``lcp init`` uses) and go through the deploy's own
bundle reader and validator (``deploy_bundle``, audited), so the console makes exactly the app the
command line makes. The rows are posted as ``field-<n>-name``, ``-type`` and ``-required``; adding
and removing a row is a round trip (the page needs no script).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.http import QueryDict

from app_templates import DEFAULT_FIELDS, Field, TemplateError, app_name_problem, render
from app_templates.fields import MAX_FIELDS
from apps_runtime.deploy import DeployResult, deploy_bundle
from apps_runtime.manifest import DeployRejected, Problem
from apps_runtime.models import App
from console import drafts
from tenants.models import Tenant


@dataclass(frozen=True)
class Row:
    """One row of the fields table, as typed (checked only when the app is made)."""

    name: str
    type: str
    required: bool = False


def default_rows() -> list[Row]:
    return [Row(field.name, field.type, field.required) for field in DEFAULT_FIELDS]


def posted_rows(data: QueryDict) -> list[Row]:
    """The rows as posted, in order, at most ``MAX_FIELDS`` (more are a problem of the last one)."""
    try:
        count = min(int(data.get("field-count", "0")), MAX_FIELDS + 1)
    except ValueError:
        count = 0
    return [
        Row(
            name=data.get(f"field-{n}-name", "").strip()[:100],
            type=data.get(f"field-{n}-type", "")[:40],
            required=data.get(f"field-{n}-required") == "on",
        )
        for n in range(max(count, 0))
    ]


def create_app(
    tenant: Tenant, template: str, name: str, rows: list[Row], *, acting_user: AbstractBaseUser
) -> DeployResult:
    """Render ``template`` as app ``name`` (crud: with ``rows`` as its fields) and deploy it as version 1.

    Raises:
        DeployRejected: an app of that name exists, the generator refuses the name, template or a
            field (one problem each, ``/fields/<n>`` for a field), or the deploy refuses the bundle.
    """
    problem = app_name_problem(name)
    if problem:
        raise DeployRejected([Problem("/name", problem)])
    if App.objects.for_tenant(tenant).filter(name=name).exists():
        message = f"an app named {name} exists: choose another name, or edit {name} on the Apps page"
        raise DeployRejected([Problem("/name", message)])
    fields = [Field(row.name, row.type, row.required) for row in rows] if template == "crud" else None
    try:
        files = render(template, name, fields)
    except TemplateError as err:
        raise DeployRejected([_pointed(problem) for problem in err.problems]) from None
    return deploy_bundle(tenant, drafts.bundle_of(files), acting_user=acting_user)


def _pointed(problem: str) -> Problem:
    """A generator problem with the pointer of the row it names (``field 2: ...`` -> ``/fields/2``)."""
    head, _, rest = problem.partition(": ")
    if head.startswith("field ") and head[6:].isdigit():
        return Problem(f"/fields/{head[6:]}", rest)
    return Problem("/fields" if "field" in problem else "/", problem)
