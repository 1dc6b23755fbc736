"""Agents on the test app: a provider listed by the operator, a stored key, scripted models."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agents import definitions
from agents.execution import execute_run
from agents.models import AgentRun
from tests.support.apps import cases_manifest_plus

_names = itertools.count(1)
PROVIDERS = {"local": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1"}}
CONFIRM_TOOL = {
    "name": "close_case",
    "title": "Close a case",
    "description": "Close a case for good.",
    "route": "POST /cases",
    "inputSchema": {
        "type": "object",
        "properties": {"client_name": {"type": "string"}},
        "required": ["client_name"],
        "additionalProperties": False,
    },
    "annotations": {"destructiveHint": True},
    "confirm": True,
}


@pytest.fixture(autouse=True)
def operator_providers(settings):
    settings.AGENT_PROVIDERS = PROVIDERS
    settings.AGENT_CANCEL_POLL_SECONDS = 0.02
    return settings


@pytest.fixture
def cases_app(acme, deploy):
    """The test app, plus a ``confirm`` tool that creates a case (so a test can see whether it ran)."""
    deploy(acme, cases_manifest_plus({}, [CONFIRM_TOOL]))
    definitions.set_provider_key(acme, "local", "sk-test-key", acting_user=None)
    return acme


@pytest.fixture
def make_agent(db):
    def make(tenant, **fields):
        data = {"name": f"agent{next(_names)}", "provider": "local", "model": "scripted", **fields}
        return definitions.create_agent(tenant, data, acting_user=None)

    return make


def script(*turns: Callable[[list[ModelMessage], AgentInfo], ModelResponse] | ModelResponse | str):
    """A ``FunctionModel`` that answers turn N with ``turns[N]``: a response, a text, or a function.

    Every turn's ``AgentInfo`` is kept on the model as ``seen`` (the tools offered at each step).
    """
    seen: list[AgentInfo] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        turn = turns[min(len(seen) - 1, len(turns) - 1)]
        if callable(turn):
            return turn(messages, info)
        return ModelResponse(parts=[TextPart(turn)]) if isinstance(turn, str) else turn

    model = FunctionModel(answer)
    model.seen = seen
    return model


def call(name: str, **arguments) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, arguments)])


def tool_returns(messages: list[ModelMessage]) -> list[str]:
    """What the model was told by every tool so far, in order."""
    return [
        str(part.content)
        for message in messages
        for part in getattr(message, "parts", [])
        if isinstance(part, ToolReturnPart)
    ]


def run_now(run: AgentRun, model) -> AgentRun:
    """Execute the run's next slice in this thread, with ``model`` standing in for the provider."""
    execute_run(run.run_id, model=model)
    run.refresh_from_db()
    return run
