"""Clients writing records as fast as they can, remembering which writes the platform acknowledged.

Half write through the MCP built-in ``records_create``, half through the app's own front-end route
(``POST /cases``, whose handler writes over the sandbox's data pipe). A write counts as acknowledged
only when its answer says it was stored and carries the record's id.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import httpx2

from tests.support import mcp_wire as wire

TIMEOUT = httpx2.Timeout(30.0)


@dataclass(frozen=True)
class Write:
    """One attempt: which channel, the marker it wrote, and what came back."""

    channel: str
    marker: str
    record_id: str | None  # set only when acknowledged
    status: int  # HTTP status; 0 when the connection failed
    answer: str

    @property
    def acknowledged(self) -> bool:
        return self.record_id is not None


@dataclass
class Writers:
    base_url: str
    token: str
    count: int = 4
    writes: list[Write] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._loop, args=(n,), name=f"writer-{n}", daemon=True)
            for n in range(self.count)
        ]

    def start(self) -> Writers:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> list[Write]:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)
        return list(self.writes)

    def acknowledged_since(self, index: int) -> int:
        with self._lock:
            return sum(1 for write in self.writes[index:] if write.acknowledged)

    def _loop(self, n: int) -> None:
        channel = "mcp" if n % 2 == 0 else "front"
        with httpx2.Client(timeout=TIMEOUT) as client:
            seq = 0
            while not self._stop.is_set():
                seq += 1
                write = self._write(client, channel, f"w{n}-{seq}")
                with self._lock:
                    self.writes.append(write)

    def _write(self, client: httpx2.Client, channel: str, marker: str) -> Write:
        try:
            if channel == "mcp":
                return self._through_mcp(client, marker)
            return self._through_front_end(client, marker)
        except httpx2.HTTPError as err:
            return Write(channel, marker, None, 0, repr(err))

    def _through_mcp(self, client: httpx2.Client, marker: str) -> Write:
        arguments = {"app": "cases", "collection": "cases", "data": {"client_name": marker}}
        message = wire.request("tools/call", {"name": "acme_records_create", "arguments": arguments})
        headers = wire.modern_headers(self.token, message)
        response = client.post(f"{self.base_url}/t/acme/mcp", content=wire.encode(message), headers=headers)
        record_id = None
        for answer in wire.messages_in(response):
            result = answer.get("result") if isinstance(answer, dict) else None
            if isinstance(result, dict) and result.get("isError") is False:
                record_id = (result.get("structuredContent") or {}).get("id")
        return Write("mcp", marker, record_id, response.status_code, response.text[:2000])

    def _through_front_end(self, client: httpx2.Client, marker: str) -> Write:
        response = client.post(
            f"{self.base_url}/t/acme/apps/cases/cases",
            json={"client_name": marker},
            headers={"Authorization": f"Bearer {self.token}"},
        )
        record_id = None
        if response.status_code == 201:
            record_id = response.json().get("id")
        return Write("front", marker, record_id, response.status_code, response.text[:2000])


def stored_records(platform) -> dict[str, dict]:
    """Every record of the ``cases`` collection in the platform's database: id -> data."""
    return platform.python(
        "import json; from apps_runtime.models import Record; "
        "print(json.dumps({r.record_id: r.data for r in Record.all_tenants.filter(collection='cases')}))"
    )
