"""``manage.py serve``: several workers only where a session's requests may reach any of them."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command


def test_several_workers_with_stateful_sessions_are_refused(settings):
    settings.MCP_STATELESS = False

    with pytest.raises(CommandError, match="MCP_STATELESS"):
        call_command("serve", "--workers", "2")


def test_no_workers_is_refused():
    with pytest.raises(CommandError, match="at least 1"):
        call_command("serve", "--workers", "0")
