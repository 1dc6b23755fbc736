"""The settings read a development checkout's .env, the environment wins, and production needs a key."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "lowcode_platform"
PRINT_DEBUG = "from lowcode_platform import settings; print(settings.DEBUG)"


def _settings_in(checkout: Path, dotenv: str | None, **env: str) -> subprocess.CompletedProcess:
    """Import the settings of a copy of the package at ``checkout``, with that checkout's .env.

    The other packages (whose ``conf.py`` declare the settings) come from this repository.
    """
    shutil.copytree(PACKAGE, checkout / "lowcode_platform", ignore=shutil.ignore_patterns("__pycache__"))
    if dotenv is not None:
        (checkout / ".env").write_text(dotenv)
    base = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}}
    return subprocess.run(
        [sys.executable, "-c", PRINT_DEBUG],
        cwd=checkout,
        env={
            **base,
            "PYTHONPATH": os.pathsep.join([str(checkout), str(REPO)]),
            "PLATFORM_VAR_DIR": str(checkout / "var"),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_checkout_whose_env_file_turns_debug_on_needs_no_secret_key(tmp_path):
    result = _settings_in(tmp_path, "# written by make install\nDEBUG=true\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_a_variable_in_the_environment_wins_over_the_env_file(tmp_path):
    result = _settings_in(tmp_path, "DEBUG=true\n", DEBUG="false")
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_without_an_env_file_the_platform_refuses_to_start_without_a_secret_key_and_says_what_to_do(tmp_path):
    result = _settings_in(tmp_path, None)
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr
    assert "make install" in result.stderr


def test_a_production_host_with_a_secret_key_starts_with_debug_off(tmp_path):
    result = _settings_in(tmp_path, None, SECRET_KEY="a-real-secret-key-from-the-operator")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("DEBUG", "maybe", "is not a boolean (use true or false)"),
        ("MCP_PAGE_SIZE", "many", "is not an integer"),
        ("MCP_TENANT_QUEUE_SECONDS", "soon", "is not a number"),
        ("SANDBOX_UID_RANGE", "1-x", "is not a range FIRST-LAST of integers"),
    ],
)
def test_every_kind_of_malformed_variable_stops_start_up_naming_it(tmp_path, name, value, says):
    result = _settings_in(tmp_path, "DEBUG=true\n", **{name: value})

    assert result.returncode != 0
    assert f"ImproperlyConfigured: {name}={value!r} {says}" in result.stderr


def test_blank_variables_take_their_defaults(tmp_path):
    result = _settings_in(tmp_path, "DEBUG=true\n", MCP_PAGE_SIZE="  ", ALLOWED_HOSTS=" ")

    assert result.returncode == 0, result.stderr
