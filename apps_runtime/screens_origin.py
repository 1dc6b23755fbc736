"""On ``SCREENS_ORIGIN`` the platform serves screens' documents and the App SDK, nothing else.

The same deployment answers both hosts. Without this, the screens' site would also serve the
sign-in page, the console and the API: a session made there would be one the screens' site holds,
and a look-alike of the platform on a site tenants' code runs on. Requests for that host stop here,
before sessions or CSRF run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from apps_runtime.exceptions import RouteNotFound
from apps_runtime.screens import SDK_PATH
from core.problems import error_response

SERVED = re.compile(
    r"^/t/[a-z0-9-]+/apps/[a-z][a-z0-9_]*/_screens/[a-z0-9_]{1,40}/document$|^" + re.escape(SDK_PATH) + "$"
)


class ScreensOriginOnly:
    """Answers 404 to anything but a screen's document or the SDK on the ``SCREENS_ORIGIN`` host."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        origin = settings.SCREENS_ORIGIN
        if origin and request.get_host().lower() == urlsplit(origin).netloc.lower():
            if not SERVED.match(request.path):
                return error_response(RouteNotFound("only screens are served on this host"))
        return self.get_response(request)
