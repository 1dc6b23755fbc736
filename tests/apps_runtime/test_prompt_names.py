"""Prompt wire names: the tools' rule, and a deploy refused when another app's prompt holds one."""

import pytest

from apps_runtime.deploy import rollback_app
from apps_runtime.manifest import DeployRejected


def manifest(app: str, prompt: str) -> dict:
    return {
        "name": app,
        "routes": {},
        "mcp": {
            "prompts": [{"name": prompt, "description": "d", "messages": [{"role": "user", "text": "hi"}]}]
        },
    }


def test_a_prompt_wire_name_held_by_another_app_is_refused_naming_the_holder(make_tenant, deploy):
    tenant = make_tenant("acme")
    deploy(tenant, manifest("cases", "x_y"), {})
    with pytest.raises(DeployRejected) as info:
        deploy(tenant, manifest("cases_x", "y"), {})
    assert [str(p) for p in info.value.problems] == [
        "/mcp/prompts/0/name: prompt wire name 'acme_cases_x_y' is already taken by prompt 'x_y' of app "
        "'cases'; rename the prompt"
    ]


def test_redeploying_the_same_app_keeps_its_own_prompt_names(make_tenant, deploy):
    tenant = make_tenant("acme")
    deploy(tenant, manifest("cases", "x_y"), {})
    deploy(tenant, manifest("cases", "x_y"), {})
    rollback_app(tenant, "cases", acting_user=None)
