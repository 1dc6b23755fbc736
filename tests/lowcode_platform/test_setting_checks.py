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
