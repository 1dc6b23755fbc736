"""The fuzz suite: one served platform for the session (see ``profile`` for the Hypothesis bounds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

# profile registers the Hypothesis profiles before --hypothesis-profile is read.
from tests.fuzz import profile  # noqa: F401
from tests.support import mcp_wire as wire
from tests.support.platform_process import PlatformProcess, migrated_database


@dataclass(frozen=True)
class Served:
    """The platform under fuzz: its process, its MCP endpoint and a token per person of ``platform_seed``.

    Tenant ``acme`` is for the MCP fuzzers; tenant ``api`` (people ``api_*``) is for the REST API
    fuzzer, whose deletes and revocations must not take the MCP fuzzers' tokens away.
    """

    api_slug: ClassVar[str] = "api"
    api_prefix: ClassVar[str] = "api_"

    platform: PlatformProcess
    tokens: dict[str, str]
    api_tokens: dict[str, str]

    @property
    def mcp_url(self) -> str:
        return f"{self.platform.base_url}/t/acme/mcp"

    @property
    def base_url(self) -> str:
        return self.platform.base_url

    def restore_api_person(self, name: str) -> str:
        """Membership and a fresh token for ``api_<name>``, after the API fuzzer removed or revoked them."""
        code = (
            "import json; from tests.support.platform_seed import restore; "
            f"print(json.dumps(restore({self.api_slug!r}, {name!r}, {self.api_prefix!r})))"
        )
        self.api_tokens[name] = self.platform.python(code)
        return self.api_tokens[name]


@pytest.fixture(scope="session")
def served(tmp_path_factory) -> Served:
    workdir = tmp_path_factory.mktemp("fuzz-platform")
    database = migrated_database(workdir)
    platform = PlatformProcess(workdir, database.url)
    try:
        acme, api = platform.seed(("acme", ""), (Served.api_slug, Served.api_prefix))
        platform.start()
        yield Served(platform, acme["tokens"], api["tokens"])
    finally:
        platform.stop()
        database.drop()


@pytest.fixture(scope="session")
def tool_schemas(served) -> dict[str, dict]:
    """Every tool the superuser sees (built-ins and the test app's), with its inputSchema."""
    return wire.tool_schemas(served.mcp_url, served.tokens["root"])
