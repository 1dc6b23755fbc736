from tests.oauth.fixtures import cimd_server, fast_password_hashing, public_origin  # noqa: F401
