"""The platform's REST API as ``lcp`` uses it: every answer it cannot use becomes one clear ``LcpError``."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from lcp.config import Login
from lcp.exceptions import TOKEN_REFUSED, LcpError, NoSuchApi, Refused

TIMEOUT = httpx2.Timeout(30.0, connect=10.0)


class Platform:
    """One platform and tenant, as the stored (or given) login reaches it."""

    def __init__(self, login: Login, *, transport: httpx2.BaseTransport | None = None):
        self.login = login
        self.http = httpx2.Client(
            base_url=login.url,
            headers={"Authorization": f"Bearer {login.token}", "Accept": "application/json"},
            timeout=TIMEOUT,
            transport=transport,
        )

    def __enter__(self) -> Platform:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.http.close()

    @property
    def api(self) -> str:
        return f"/api/tenants/{self.login.tenant}"

    def request(
        self, method: str, path: str, *, missing: str | None = None, api: str | None = None, **kwargs: Any
    ) -> Any:
        """The JSON answer of ``method path``; ``api`` names an API older platforms lack.

        Raises:
            Refused: a 422 that lists problems (a deploy or a rollback the platform refused).
            NoSuchApi: a 404 for ``api``, which this platform does not have.
            LcpError: the platform is unreachable, not the platform, refused the token or the user,
                has no such thing (``missing``), or failed.
        """
        try:
            answer = self.http.request(method, path, **kwargs)
        except httpx2.TimeoutException:
            raise LcpError(f"{self.login.url} did not answer in time: try again") from None
        except httpx2.TransportError as err:
            reason = str(err) or err.__class__.__name__
            where = self.login.url
            raise LcpError(f"cannot reach {where} ({reason}): is the platform running there?") from None
        return self._judge(answer, missing, api)

    def _judge(self, answer: httpx2.Response, missing: str | None, api: str | None = None) -> Any:
        try:
            body = answer.json()
        except ValueError:
            body = None
        status = answer.status_code
        detail = body.get("detail") if isinstance(body, dict) else None
        if status == 404 and api is not None and body is None:  # no such URL here, not a missing thing
            raise NoSuchApi(f"{self.login.url} has no {api} API: it is an older platform")
        if status == 401:
            raise LcpError(TOKEN_REFUSED)
        if status == 403:
            raise LcpError(
                f"not allowed in tenant '{self.login.tenant}': this needs a tenant admin's token "
                "(not read-only, issued for this tenant)"
            )
        if status == 404 and body is not None:
            raise LcpError(missing or detail or f"not found in tenant '{self.login.tenant}'")
        if status == 422 and isinstance(body, dict) and "problems" in body:
            problems = [f"{p['pointer']}: {p['message']}" for p in body["problems"]]
            raise Refused("deploy", problems, list(body.get("warnings") or []))
        if body is None or not isinstance(body, dict | list):
            where = self.login.url
            raise LcpError(f"{where} did not answer as the platform does (HTTP {status}): check the URL")
        if status >= 500:
            error_id = body.get("errorId") if isinstance(body, dict) else None
            noted = f", error id {error_id}" if error_id else ""
            raise LcpError(f"the platform failed (HTTP {status}{noted})")
        if status >= 400:
            raise LcpError(f"refused (HTTP {status}): {detail or json.dumps(body)[:300]}")
        return body

    # -- the calls lcp makes ------------------------------------------------------------------------------

    def apps(self) -> list[dict]:
        return self.request("GET", f"{self.api}/apps")

    def validate(self, bundle: dict) -> dict:
        return self.request("POST", f"{self.api}/apps/validate", json=bundle)

    def deploy(self, bundle: dict) -> dict:
        return self.request("POST", f"{self.api}/apps", json=bundle)

    def rollback(self, app: str) -> dict:
        try:
            return self.request("POST", f"{self.api}/apps/{app}/rollback")
        except Refused as refused:  # no such app, no earlier version, or its wire names are taken now
            reasons = "; ".join(p.split(": ", 1)[-1] for p in refused.problems)
            raise LcpError(f"rollback refused: {reasons}") from None

    def errors(self, *, since: str | None = None, app: str | None = None, limit: int = 20) -> dict:
        params = {"limit": limit, **({"since": since} if since else {}), **({"app": app} if app else {})}
        return self.request("GET", f"{self.api}/errors", params=params)

    def logs(self, *, since: str | None = None, app: str | None = None, limit: int = 20) -> dict:
        """What successful runs logged, paged as the errors are (``{"logs": [...], "cursor": ...}``)."""
        params = {"limit": limit, **({"since": since} if since else {}), **({"app": app} if app else {})}
        return self.request("GET", f"{self.api}/logs", params=params, api="call logs")

    def error(self, error_id: str) -> dict:
        missing = f"no error '{error_id}' in this tenant"
        return self.request("GET", f"{self.api}/errors/{error_id}", missing=missing)
