"""The OAuth tests that need the live server: here, so they share tests/mcp_gateway's one server
(the gateway's session manager runs once per process)."""

from tests.oauth.fixtures import cimd_server, fast_password_hashing, public_origin  # noqa: F401
