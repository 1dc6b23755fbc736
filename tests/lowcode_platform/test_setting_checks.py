"""Each app checks the ranges of the settings it reads; a value that is not a number stops start-up."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.checks import run_checks

REPO = Path(__file__).resolve().parents[2]


def errors(prefix: str) -> list[str]:
    return [message.msg for message in run_checks() if message.id.startswith(prefix)]


def test_the_default_settings_pass_every_check():
    assert errors("apps_runtime.") == [] and errors("mcp_gateway.") == []


@pytest.mark.parametrize(
    ("name", "value", "app", "expected"),
    [
        ("MCP_WIRE_NAME_LIMIT", 10, "apps_runtime.", "=10 must be an integer from 24 to 128"),
        ("SANDBOX_MAX_TIMEOUT_MS", 50, "apps_runtime.", "=50 must be an integer of at least 100"),
        ("JOBS_RETRY_BACKOFF_SECONDS", -1.0, "apps_runtime.", "=-1.0 must be a number of at least 0"),
        ("RECORDS_TENANT_QUOTA_BYTES", 0, "apps_runtime.", "RECORDS_TENANT_QUOTA_BYTES=0 must be an integer"),
        ("MCP_PAGE_SIZE", 0, "mcp_gateway.", "MCP_PAGE_SIZE=0 must be an integer of at least 1"),
        ("MCP_SESSION_IDLE_SECONDS", 0.5, "mcp_gateway.", "MCP_SESSION_IDLE_SECONDS=0.5 must be a number"),
        ("MCP_ALLOWED_ORIGINS", [""], "mcp_gateway.", "MCP_ALLOWED_ORIGINS=[''] must be a list of origins"),
        ("RATE_LIMIT_REDIS_URL", "127.0.0.1:6379", "mcp_gateway.", "='127.0.0.1:6379' is not a Redis URL"),
    ],
)
def test_a_setting_out_of_range_is_an_error_of_the_app_that_reads_it(settings, name, value, app, expected):
    setattr(settings, name, value)
    [message] = errors(app)
    assert message.startswith(name + expected if expected.startswith("=") else expected)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["MCP_SESSION_IDLE_SECONDS", "SANDBOX_MEMORY_MB", "MCP_STATELESS"])
def test_a_value_that_is_not_a_number_or_boolean_stops_start_up_naming_it(name, tmp_path):
    env = {**os.environ, "DEBUG": "true", "PLATFORM_VAR_DIR": str(tmp_path), name: "soon"}
    result = subprocess.run(
        [sys.executable, "-c", "import lowcode_platform.settings"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert f"ImproperlyConfigured: {name}='soon' is not" in result.stderr


def _import_settings(tmp_path: Path, code: str = "import lowcode_platform.settings", **env: str):
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**os.environ, "DEBUG": "true", "PLATFORM_VAR_DIR": str(tmp_path / "var"), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("MCP_PAGE_SIZE", "0", "is not an integer of at least 1"),
        ("MCP_WIRE_NAME_LIMIT", "200", "is not an integer from 24 to 128"),
        ("AGENT_CANCEL_POLL_SECONDS", "0", "is not a number of at least 0.01"),
        ("LOG_FORMAT", "xml", "is not one of plain, json"),
    ],
)
def test_a_value_out_of_its_bounds_stops_start_up_naming_the_variable_and_its_bounds(
    tmp_path, name, value, says
):
    result = _import_settings(tmp_path, **{name: value})

    assert result.returncode != 0
    assert f"ImproperlyConfigured: {name}={value!r} {says}" in result.stderr


@pytest.mark.slow
def test_importing_the_settings_touches_no_file_and_the_app_registry_makes_the_data_folders(tmp_path):
    var = tmp_path / "var"
    imported = _import_settings(tmp_path, SECRET_KEY="a-real-secret-key-from-the-operator")
    assert imported.returncode == 0, imported.stderr
    assert not var.exists()

    setup = "import django; django.setup()"
    started = _import_settings(
        tmp_path, setup, SECRET_KEY="a-real-secret-key", DJANGO_SETTINGS_MODULE="lowcode_platform.settings"
    )
    assert started.returncode == 0, started.stderr
    assert var.stat().st_mode & 0o777 == 0o700
    assert (var / "static").is_dir() and (var / "bundles").is_dir()


def _declared_bounds():
    """Every bound declared with a setting (not those of variables feeding a setting of another name)."""
    from django.conf import settings

    from agents.conf import GROUPS as agents
    from apps_runtime.conf import GROUPS as apps_runtime
    from lowcode_platform.conf import GROUPS as platform
    from mcp_gateway.conf import GROUPS as gateway
    from oauth.conf import GROUPS as oauth

    for prefix, groups in [
        ("apps_runtime.", apps_runtime),
        ("mcp_gateway.", gateway),
        ("oauth.", oauth),
        ("agents.", agents),
        ("lowcode_platform.", platform),
    ]:
        for group in groups:
            for name, bound in group.bounds().items():
                if hasattr(settings, name):
                    yield pytest.param(prefix, name, bound, id=name)


@pytest.mark.parametrize(("app", "name", "bound"), list(_declared_bounds()))
def test_every_bound_declared_with_a_setting_is_checked_by_the_app_that_reads_it(settings, app, name, bound):
    setattr(settings, name, bound.kind(bound.low) - 1 if bound.kind is int else bound.low / 2 - 1)

    [message] = errors(app)

    assert message.startswith(f"{name}=") and bound.describe() in message


def test_the_old_environment_helpers_still_read_one_variable_with_the_same_rules(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from lowcode_platform import settings as module

    monkeypatch.setenv("SOME_BRANCH_LIMIT", " 12 ")
    monkeypatch.setenv("SOME_BRANCH_FLAG", "maybe")
    monkeypatch.setenv("SOME_BRANCH_NAMES", "a, b,,")

    assert module._env_int("SOME_BRANCH_LIMIT", 5) == 12
    assert module._env_float("SOME_BRANCH_UNSET", 1.5) == 1.5
    assert module._env_list("SOME_BRANCH_NAMES", []) == ["a", "b"]
    with pytest.raises(ImproperlyConfigured, match=r"SOME_BRANCH_FLAG='maybe' is not a boolean"):
        module._env_bool("SOME_BRANCH_FLAG", False)
