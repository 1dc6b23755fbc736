"""Agents: admins define them and store provider keys; members chat with them and follow their runs."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_POST

from agents import definitions, runs
from agents.exceptions import AgentError, AgentNotFound, InvalidAgent, NotARunner, RunNotFound
from agents.models import Agent, AgentRun, ProviderKey
from agents.providers import listed_providers
from agents.runners import describe_runners, may_run
from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.forms import AgentForm, AgentMessageForm, ProviderKeyForm
from console.pages import render_page


def _agents_page(request: HttpRequest, page: TenantPage, *, form: AgentForm | None = None, status: int = 200):
    providers = listed_providers()
    context: dict = {"agents": Agent.objects.for_tenant(page.tenant)}
    if page.is_admin:
        stored = {key.provider: key.updated_at for key in ProviderKey.objects.for_tenant(page.tenant)}
        context["providers"] = [(p, stored.get(p.name)) for p in providers.values()]
        context["form"] = form or AgentForm(providers=list(providers))
    return render_page(request, page, "agents.html", context, current="console:agents", status=status)


@tenant_page(admin=False)
def agents(request: HttpRequest, page: TenantPage) -> HttpResponse:
    return _agents_page(request, page)


@require_POST
@tenant_page(admin=True)
def create_agent(request: HttpRequest, page: TenantPage) -> HttpResponse:
    form = AgentForm(request.POST, providers=list(listed_providers()))
    if form.is_valid():
        try:
            agent = definitions.create_agent(page.tenant, form.definition(), acting_user=request.user)
        except InvalidAgent as err:
            for field, message in err.problems:
                name = field.split("[")[0]
                form.add_error(name if name in form.fields else None, message)
        else:
            messages.success(request, f"Agent {agent.name} created.")
            return redirect("console:agent", slug=page.tenant.slug, name=agent.name)
    return _agents_page(request, page, form=form, status=400)


@require_POST
@tenant_page(admin=True)
def set_provider_key(request: HttpRequest, page: TenantPage) -> HttpResponse:
    form = ProviderKeyForm(request.POST)
    if form.is_valid():
        try:
            definitions.set_provider_key(
                page.tenant,
                form.cleaned_data["provider"],
                form.cleaned_data["api_key"],
                acting_user=request.user,
            )
        except AgentError as err:
            messages.error(request, str(err))
        else:
            messages.success(
                request, f"Key for {form.cleaned_data['provider']} stored; it will not be shown again."
            )
    else:
        messages.error(request, "Type the key to store.")
    return redirect("console:agents", slug=page.tenant.slug)


@require_POST
@tenant_page(admin=True)
def forget_provider_key(request: HttpRequest, page: TenantPage) -> HttpResponse:
    provider = request.POST.get("provider", "")
    if definitions.delete_provider_key(page.tenant, provider, acting_user=request.user):
        messages.success(
            request, f"Key for {provider} forgotten: runs of agents using it fail until a new one is stored."
        )
    else:
        messages.error(request, f"No key was stored for {provider}.")
    return redirect("console:agents", slug=page.tenant.slug)


def _initial(agent: Agent) -> dict:
    """An agent as the form shows it (lists in the form's comma-separated syntax)."""
    return {
        "name": agent.name,
        "provider": agent.provider,
        "model": agent.model,
        "instructions": agent.instructions,
        "tools": ", ".join(agent.tools) if agent.tools is not None else "",
        "run_as": agent.run_as,
        "service_roles": ", ".join(agent.service_roles),
        "runners": agent.runners,
        "max_steps": agent.max_steps,
        "max_tool_calls": agent.max_tool_calls,
        "max_tokens": agent.max_tokens,
        "max_seconds": agent.max_seconds,
    }


@tenant_page(admin=True)
def edit_agent(request: HttpRequest, page: TenantPage, name: str) -> HttpResponse:
    """Change an agent (not its name) through the same action as ``PATCH /api/.../agents/<name>``."""
    found = _agent(page, name)
    providers = list(listed_providers())
    form = AgentForm(initial=_initial(found), providers=providers)
    status = 200
    if request.method == "POST":
        data = request.POST.copy()
        data["name"] = name  # the name never changes; the action refuses another one anyway
        form = AgentForm(data, initial=_initial(found), providers=providers)
        status = 400
        if form.is_valid():
            data = {key: value for key, value in form.definition().items() if key != "name"}
            try:
                definitions.update_agent(page.tenant, name, data, acting_user=request.user)
            except InvalidAgent as err:
                for field, message in err.problems:
                    field_name = field.split("[")[0]
                    form.add_error(field_name if field_name in form.fields else None, message)
            else:
                messages.success(request, f"Agent {name} saved.")
                return redirect("console:agent", slug=page.tenant.slug, name=name)
    form.fields["name"].disabled = True
    context = {"agent": found, "form": form}
    return render_page(request, page, "agent_edit.html", context, current="console:agents", status=status)


@require_POST
@tenant_page(admin=True)
def delete_agent(request: HttpRequest, page: TenantPage, name: str) -> HttpResponse:
    definitions.delete_agent(page.tenant, _agent(page, name).name, acting_user=request.user)
    messages.success(request, f"Agent {name} and its runs deleted.")
    return redirect("console:agents", slug=page.tenant.slug)


def _agent(page: TenantPage, name: str) -> Agent:
    try:
        return definitions.access_agent(page.tenant, name)
    except AgentNotFound as err:
        raise ConsoleNotFound() from err


@tenant_page(admin=False)
def agent(request: HttpRequest, page: TenantPage, name: str) -> HttpResponse:
    """The chat page: send the agent a message; your runs (all runs, for admins) below."""
    found = _agent(page, name)
    form = AgentMessageForm()
    status = 200
    if request.method == "POST":
        form = AgentMessageForm(request.POST)
        status = 400
        if form.is_valid():
            try:
                run = runs.start_run(page.tenant, found, request.user, form.cleaned_data["input"])
            except AgentError as err:
                form.add_error(None, str(err))
                status = 403 if isinstance(err, NotARunner) else 400
            else:
                return redirect("console:agent-run", slug=page.tenant.slug, name=name, run_id=run.run_id)
    context = {
        "agent": found,
        "form": form,
        "runs": runs.visible_runs(page.tenant, found, request.user),
        "runners": describe_runners(found),
        "may_run": may_run(page.tenant, found, request.user),
    }
    return render_page(request, page, "agent.html", context, current="console:agents", status=status)


def _run(page: TenantPage, name: str, run_id: str) -> AgentRun:
    try:
        return runs.access_run(page.tenant, _agent(page, name), run_id, page.user)
    except RunNotFound as err:
        raise ConsoleNotFound() from err


@tenant_page(admin=False)
def agent_run(request: HttpRequest, page: TenantPage, name: str, run_id: str) -> HttpResponse:
    """A run: the message, each step as it comes (the page follows the run's event stream), the answer."""
    run = _run(page, name, run_id)
    steps = list(run.steps.order_by("index"))
    for step in steps:  # shown as JSON, the way the API and the model send them (not a Python repr)
        step.arguments_json = json.dumps(step.arguments, ensure_ascii=False, sort_keys=True)
    pending = {s.index for s in steps if s.approval == "pending" and s.tool_call_id in run.pending_calls}
    context = {
        "agent": run.agent,
        "run": run,
        "steps": steps,
        "pending": pending,
        "may_approve": bool(pending) and may_run(page.tenant, run.agent, page.user),
        "runners": describe_runners(run.agent),
    }
    return render_page(request, page, "agent_run.html", context, current="console:agents")


@require_POST
@tenant_page(admin=False)
def decide(request: HttpRequest, page: TenantPage, name: str, run_id: str, step: int) -> HttpResponse:
    run = _run(page, name, run_id)
    approve = request.POST.get("decision") == "approve"
    try:
        runs.decide(run, step, approve, request.user)
    except AgentError as err:
        messages.error(request, str(err))
    else:
        messages.success(
            request, f"Step {step} {'approved: the run goes on' if approve else 'denied: it will not run'}."
        )
    return redirect("console:agent-run", slug=page.tenant.slug, name=name, run_id=run_id)


@require_POST
@tenant_page(admin=False)
def cancel(request: HttpRequest, page: TenantPage, name: str, run_id: str) -> HttpResponse:
    run = _run(page, name, run_id)
    try:
        runs.cancel_run(run, request.user)
    except AgentError as err:
        messages.error(request, str(err))
    else:
        messages.success(request, "Run cancelled.")
    return redirect("console:agent-run", slug=page.tenant.slug, name=name, run_id=run_id)


@require_GET
@cache_control(max_age=300)
def run_script(request: HttpRequest) -> HttpResponse:
    """The agent run page's script: it follows the run's event stream."""
    return HttpResponse(render_to_string("console/agent_run.js"), content_type="text/javascript")
