"""The one base of every domain error: its status, code and problem members say how HTTP shows it.

Each package's error base (``tenants.exceptions.TenantError``, ``apps_runtime.exceptions.
RuntimeDomainError``, ``apps_runtime.manifest.problems.DeployRejected``, ``agents.exceptions.
AgentError``, ``oauth.exceptions.OAuthError``) subclasses it, so the DRF exception handler
(``lowcode_platform.api_errors``) and the plain views answer any of them with
``core.problems.error_response``, and a new package's errors render as problems, never as 500s.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """An error whose message is safe to show to the caller.

    ``status`` and ``code`` are the HTTP status and the problem's ``code``; ``problem_members``
    adds members of the problem body (``detail`` replaces the message as the body's ``detail``).
    """

    status: int = 400
    code: str = "invalid_input"

    def problem_members(self) -> dict[str, Any]:
        """Extension members of the problem body; none by default."""
        return {}
