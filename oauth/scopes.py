"""The authorization server's scopes: ``mcp`` (the settings' ``SCOPES``) and the app scopes a
connection may be narrowed to (``app:<name>``, ``app:<name>:read``: ``oauth.access.is_app_scope``),
which are as many as the tenants' apps, so they are described by rule rather than listed."""

from __future__ import annotations

from oauth2_provider.scopes import SettingsScopes

from oauth.access import is_app_scope


class _Described(dict):
    def __missing__(self, scope: str) -> str:
        if not is_app_scope(scope):
            raise KeyError(scope)
        name = scope.split(":")[1]
        return f"Use the app {name} (read-only)" if scope.endswith(":read") else f"Use the app {name}"


class PlatformScopes(SettingsScopes):
    def get_all_scopes(self) -> dict[str, str]:
        return _Described(super().get_all_scopes())
