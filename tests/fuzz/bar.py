"""The bar every fuzz case must clear: no 5xx, nothing of the host in the answer, the server still serving."""

from __future__ import annotations

import httpx2
from mcp.types import INTERNAL_ERROR

from tests.support import mcp_wire as wire
from tests.support.leaks import leaks
from tests.support.platform_process import PlatformProcess

# JSON-RPC's "5xx": an internal error (-32603), or one passed off as code 0. Hostile input is the
# caller's fault and must be answered as such (-32600/-32601/-32602/-32700, or a tool error).
PLATFORM_FAULT_CODES = (0, INTERNAL_ERROR)


def assert_clean_answer(
    response: httpx2.Response, sent: bytes | str = b"", extra: tuple[str, ...] = ()
) -> None:
    """Below 500, no trace or host path, and no JSON-RPC internal error; a failure shows what was sent."""
    sent_text = sent.decode(errors="replace") if isinstance(sent, bytes) else sent
    text = response.text
    case = f"\n--- sent ---\n{sent_text[:1500]}\n--- answer ---\n{text[:1500]}"
    assert response.status_code < 500, f"HTTP {response.status_code}{case}"
    found = leaks(text, sent_text, extra)
    assert not found, f"the answer shows {found}{case}"
    for message in wire.messages_in(response):
        error = message.get("error") if isinstance(message, dict) else None
        if isinstance(error, dict):
            assert error.get("code") not in PLATFORM_FAULT_CODES, f"a platform fault on hostile input{case}"


def assert_still_serving(platform: PlatformProcess, mcp_url: str, token: str) -> None:
    """The process is alive, its health check passes and a caller still gets their tools."""
    assert platform.alive, f"the server died:\n{platform.log_tail()}"
    health = wire.client("check").get(f"{platform.base_url}/healthz")
    assert health.status_code == 200, health.text
    assert wire.tool_names(mcp_url, token), "the caller's tools are gone"
