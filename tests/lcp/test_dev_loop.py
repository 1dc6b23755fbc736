"""``lcp dev`` against an older platform, one without the call-logs API: it streams errors only.

The older platform is a stand-in transport (no such platform is kept to run): it answers the APIs
``lcp dev`` polls, and Django's HTML 404 for ``/logs``.
"""

from __future__ import annotations

import json

import httpx2
import pytest

from lcp.client import Platform
from lcp.config import Login
from lcp.dev import DevLoop
from lcp.exceptions import NoSuchApi
from lcp.templates import write_app


def older_platform(request: httpx2.Request) -> httpx2.Response:
    path = request.url.path
    if path.endswith("/errors"):
        return httpx2.Response(200, json={"errors": [], "cursor": "7"})
    if path.endswith("/apps") and request.method == "GET":
        return httpx2.Response(200, json=[])
    if path.endswith("/apps"):
        name = json.loads(request.content)["manifest"]["name"]
        return httpx2.Response(201, json={"name": name, "active_version": 1, "tools": [], "warnings": []})
    return httpx2.Response(404, text="<!DOCTYPE html><title>Not Found</title>")


def test_dev_on_an_older_platform_says_it_streams_errors_only_and_keeps_watching(tmp_path, capsys):
    write_app("crud", "todo", tmp_path / "todo")
    login = Login(url="http://old.invalid", tenant="acme", token="lcp_x_y")
    with Platform(login, transport=httpx2.MockTransport(older_platform)) as platform:
        with pytest.raises(NoSuchApi, match="http://old.invalid has no call logs API"):
            platform.logs()
        DevLoop(platform, tmp_path / "todo", interval=0.05).run(max_seconds=0.2)
    err = capsys.readouterr().err
    assert "has no call logs API: it is an older platform: streaming errors only" in err
    assert "todo v1 is live (0 tools)" in err
    assert err.count("lcp: ") == 1  # said once, not on every poll
