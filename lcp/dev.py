"""``lcp dev``: watch an app folder; on each save validate and deploy it, say which tools changed, and
stream the app's handler errors (trace and logs) and what its successful runs log, as they happen.

Polls the folder (no watcher dependency, the same on every OS) and the platform's error and call-log
lists, whose cursors start at "now". A refused deploy prints its problems and the loop goes on; so does
a platform that is briefly down.
"""

from __future__ import annotations

import time
from pathlib import Path

from lcp.bundle_files import read_folder, snapshot
from lcp.client import Platform
from lcp.exceptions import LcpError, NoSuchApi, Refused
from lcp.output import call_log_lines, error_lines, note, plural

SETTLE_SECONDS = 0.2  # an editor may write a file in steps: wait until the folder stops changing


def tool_map(platform: Platform, app: str) -> dict[str, dict]:
    """Wire name -> descriptor of the deployed tools of ``app`` (empty if it is not deployed)."""
    for found in platform.apps():
        if found["name"] == app and found["active_version"] is not None:
            return {tool["wire_name"]: tool["descriptor"] for tool in found["tools"]}
    return {}


def changes(before: dict[str, dict], after: dict[str, dict]) -> list[str]:
    """``+ wire`` (new), ``- wire`` (gone) and ``~ wire`` (changed) lines, by wire name."""
    lines = [f"+ {w}" for w in after if w not in before]
    lines += [f"- {w}" for w in before if w not in after]
    lines += [f"~ {w}" for w in after if w in before and after[w] != before[w]]
    return sorted(lines, key=lambda line: line[2:])


class DevLoop:
    def __init__(self, platform: Platform, folder: Path, *, interval: float):
        self.platform = platform
        self.folder = folder
        self.interval = interval
        self.seen: dict | None = None
        self.cursor: str | None = None
        self.logs_cursor: str | None = None
        self.app: str | None = None

    def run(self, *, max_seconds: float | None = None) -> None:
        """Watch until interrupted (or for ``max_seconds``)."""
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        self.cursor = self.platform.errors(limit=1)["cursor"]  # errors and logs from now on
        try:
            self.logs_cursor = self.platform.logs(limit=1)["cursor"]
        except NoSuchApi as err:
            note(f"lcp: {err.format_message()}: streaming errors only")
        note(f"watching {self.folder} (Ctrl-C stops)")
        while deadline is None or time.monotonic() < deadline:
            self.step()
            time.sleep(self.interval)

    def step(self) -> None:
        try:
            current = snapshot(self.folder)
            if current != self.seen:
                time.sleep(SETTLE_SECONDS)
                current = snapshot(self.folder)
                self.seen = current
                self.deploy()
            self.stream_errors()
            self.stream_logs()
        except LcpError as err:  # the platform down, a file half-written: say so and keep watching
            note(f"lcp: {err.format_message()}")

    def deploy(self) -> None:
        bundle = read_folder(self.folder)
        self.app = bundle["manifest"].get("name") if isinstance(bundle["manifest"], dict) else None
        before = tool_map(self.platform, self.app) if isinstance(self.app, str) else {}
        try:
            deployed = self.platform.deploy(bundle)
        except Refused as refused:
            for line in refused.problems:
                print(line, flush=True)
            for warning in refused.warnings:
                note(f"warning: {warning}")
            note(f"deploy refused: {plural(len(refused.problems), 'problem')}; fix and save again")
            return
        for warning in deployed.get("warnings") or []:
            note(f"warning: {warning}")
        after = {tool["wire_name"]: tool["descriptor"] for tool in deployed["tools"]}
        for line in changes(before, after):
            print(line, flush=True)
        tools = plural(len(after), "tool")
        note(f"{deployed['name']} v{deployed['active_version']} is live ({tools})")

    def stream_errors(self) -> None:
        page = self.platform.errors(since=self.cursor, app=self.app, limit=100)
        self.cursor = page["cursor"]
        for error in page["errors"]:
            for line in error_lines(error):
                print(line, flush=True)

    def stream_logs(self) -> None:
        if self.logs_cursor is None:
            return
        page = self.platform.logs(since=self.logs_cursor, app=self.app, limit=100)
        self.logs_cursor = page["cursor"]
        for entry in page["logs"]:
            for line in call_log_lines(entry):
                print(line, flush=True)
