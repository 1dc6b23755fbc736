"""Agents API under /api/tenants/<slug>/: definitions and provider keys (admins), runs (members).

Views validate, call ``definitions``/``runs`` and serialize; the domain errors render themselves.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from agents import definitions, runs
from agents.api.serializers import (
    AgentWriteSerializer,
    ApprovalSerializer,
    ProviderKeySerializer,
    RunStartSerializer,
    agent_body,
    run_body,
    run_summary,
    step_body,
)
from agents.models import Agent, AgentRun, AgentRunStep, ProviderKey
from agents.providers import listed_providers
from tenants.api.permissions import IsTenantAdmin, IsTenantMember
from tenants.api.views import TenantAPIView


class MemberReadsAdminWrites(TenantAPIView):
    """Members read; tenant admins (and platform superusers) write."""

    def get_permissions(self) -> list:
        return [IsTenantMember()] if self.request.method in ("GET", "HEAD", "OPTIONS") else [IsTenantAdmin()]


class MemberView(TenantAPIView):
    permission_classes = [IsTenantMember]


class AgentListView(MemberReadsAdminWrites):
    @extend_schema(operation_id="tenants_agents_list", responses=OpenApiResponse(description="The agents."))
    def get(self, request: Request, slug: str) -> Response:
        return Response([agent_body(agent) for agent in Agent.objects.for_tenant(self.tenant)])

    @extend_schema(request=AgentWriteSerializer, responses={201: OpenApiResponse(description="The agent.")})
    def post(self, request: Request, slug: str) -> Response:
        agent = definitions.create_agent(self.tenant, _object(request.data), acting_user=request.user)
        return Response(agent_body(agent), status=status.HTTP_201_CREATED)


class AgentDetailView(MemberReadsAdminWrites):
    @extend_schema(responses=OpenApiResponse(description="The agent."))
    def get(self, request: Request, slug: str, name: str) -> Response:
        return Response(agent_body(definitions.access_agent(self.tenant, name)))

    @extend_schema(request=AgentWriteSerializer, responses=OpenApiResponse(description="The agent."))
    def patch(self, request: Request, slug: str, name: str) -> Response:
        agent = definitions.update_agent(self.tenant, name, _object(request.data), acting_user=request.user)
        return Response(agent_body(agent))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, name: str) -> Response:
        definitions.delete_agent(self.tenant, name, acting_user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProviderListView(TenantAPIView):
    """The operator's providers, and whether this tenant stored a key for each (never the key)."""

    @extend_schema(responses=OpenApiResponse(description="Providers and key status."))
    def get(self, request: Request, slug: str) -> Response:
        stored = {k.provider: k.updated_at for k in ProviderKey.objects.for_tenant(self.tenant)}
        return Response(
            [
                {
                    "name": p.name,
                    "kind": p.kind,
                    "base_url": p.base_url,
                    "key_stored": p.name in stored,
                    "key_updated_at": stored.get(p.name),
                }
                for p in listed_providers().values()
            ]
        )


class ProviderKeyView(TenantAPIView):
    @extend_schema(request=ProviderKeySerializer, responses={204: None})
    def put(self, request: Request, slug: str, provider: str) -> Response:
        serializer = ProviderKeySerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        definitions.set_provider_key(
            self.tenant, provider, serializer.validated_data["api_key"], acting_user=request.user
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, provider: str) -> Response:
        definitions.delete_provider_key(self.tenant, provider, acting_user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RunListView(MemberView):
    @extend_schema(
        operation_id="tenants_agents_runs_list",
        responses=OpenApiResponse(description="The newest runs you may see."),
    )
    def get(self, request: Request, slug: str, name: str) -> Response:
        agent = definitions.access_agent(self.tenant, name)
        return Response([run_summary(run) for run in runs.visible_runs(self.tenant, agent, request.user)])

    @extend_schema(request=RunStartSerializer, responses={202: OpenApiResponse(description="{id, status}")})
    def post(self, request: Request, slug: str, name: str) -> Response:
        agent = definitions.access_agent(self.tenant, name)
        run = runs.start_run(self.tenant, agent, request.user, _object(request.data).get("input"))
        return Response({"id": run.run_id, "status": run.status}, status=status.HTTP_202_ACCEPTED)


class RunView(MemberView):
    def run(self, name: str, run_id: str) -> AgentRun:
        agent = definitions.access_agent(self.tenant, name)
        return runs.access_run(self.tenant, agent, run_id, self.request.user)


class RunDetailView(RunView):
    @extend_schema(responses=OpenApiResponse(description="Status, steps, usage, output."))
    def get(self, request: Request, slug: str, name: str, run_id: str) -> Response:
        return Response(run_body(self.run(name, run_id)))


class RunCancelView(RunView):
    @extend_schema(request=None, responses={202: OpenApiResponse(description="The run.")})
    def post(self, request: Request, slug: str, name: str, run_id: str) -> Response:
        run = runs.cancel_run(self.run(name, run_id), request.user)
        return Response(run_body(run), status=status.HTTP_202_ACCEPTED)


class RunApprovalView(RunView):
    @extend_schema(request=ApprovalSerializer, responses=OpenApiResponse(description="The run."))
    def post(self, request: Request, slug: str, name: str, run_id: str, step: int) -> Response:
        serializer = ApprovalSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = runs.decide(self.run(name, run_id), step, serializer.validated_data["approve"], request.user)
        return Response(run_body(run))


class EventStreamRenderer(BaseRenderer):
    """Lets ``Accept: text/event-stream`` (what a browser's ``EventSource`` sends) through negotiation.

    The stream itself is a ``StreamingHttpResponse``; only an error answered before it (404, 403)
    passes here, and goes out as its JSON problem body.
    """

    media_type = "text/event-stream"
    format = "sse"
    charset = None

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return JSONRenderer().render(data)


class RunEventsView(RunView):
    """Server-sent events: each new step (``step``), then the run's state (``status``) when it changes.

    Ends when the run ends or pauses for approval, or after AGENT_EVENTS_MAX_SECONDS; ``?after=N``
    (or ``Last-Event-ID``) skips the steps up to N.
    """

    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @extend_schema(responses=OpenApiResponse(description="text/event-stream"))
    def get(self, request: Request, slug: str, name: str, run_id: str) -> StreamingHttpResponse:
        run = self.run(name, run_id)
        after = request.query_params.get("after") or request.headers.get("Last-Event-ID") or "-1"
        try:
            after_index = int(after)
        except ValueError:
            after_index = -1
        response = StreamingHttpResponse(_events(run.pk, after_index), content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
        return response


def _object(data: Any) -> dict:
    return data if isinstance(data, dict) else {}


def _sse(event: str, data: dict, event_id: int | None = None) -> bytes:
    lines = [f"event: {event}"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append("data: " + json.dumps(data, default=str, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode()


def _read(run_pk: int, after: int) -> tuple[AgentRun, list[AgentRunStep]]:
    run = AgentRun.all_tenants.select_related("agent", "user").get(pk=run_pk)
    runs.catch_up(run)
    return run, list(AgentRunStep.objects.filter(run_id=run_pk, index__gt=after).order_by("index")[:200])


async def _events(run_pk: int, after: int) -> AsyncIterator[bytes]:
    ends = time.monotonic() + settings.AGENT_EVENTS_MAX_SECONDS
    last_status = None
    while True:
        run, steps = await sync_to_async(_read)(run_pk, after)
        for step in steps:
            after = step.index
            yield _sse("step", step_body(step), step.index)
        if run.status != last_status:
            last_status = run.status
            yield _sse("status", run_summary(run) | {"output": run.output, "usage": run.usage})
        if run.finished or run.status == AgentRun.Status.AWAITING_APPROVAL or time.monotonic() > ends:
            return
        await _pause()


async def _pause() -> None:
    await asyncio.sleep(settings.AGENT_EVENTS_POLL_SECONDS)
