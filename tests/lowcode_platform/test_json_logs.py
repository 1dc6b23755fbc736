"""LOG_FORMAT=json: every line a JSON object with the error id and the trace id."""

from __future__ import annotations

import contextvars
import json
import logging

import anyio
import httpx2
import pytest

from core.logs import JsonFormatter, trace_id, trace_id_from
from tests.support.platform_process import PlatformProcess, migrated_database

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _line(message: str, *args, **extra) -> dict:
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, message, args, None)
    record.__dict__.update(extra)
    return json.loads(JsonFormatter().format(record))


def test_a_line_names_the_error_id_in_its_message_and_the_current_trace_id():
    token = trace_id.set("abc123")
    try:
        line = _line("Handler failed: error_id=%s", "err_01J9ZKQ2D8M6V7W3X4Y5Z6A7B8")
    finally:
        trace_id.reset(token)
    assert line["error_id"] == "err_01J9ZKQ2D8M6V7W3X4Y5Z6A7B8"
    assert line["trace_id"] == "abc123"
    assert line["level"] == "WARNING" and line["message"].startswith("Handler failed")


def test_every_line_has_both_keys_even_without_an_error_or_a_request():
    line = contextvars.Context().run(_line, "started")  # outside any request or task
    assert line["error_id"] is None and line["trace_id"] is None


def test_the_trace_id_comes_from_a_valid_traceparent_else_a_new_one():
    assert trace_id_from(TRACEPARENT) == "4bf92f3577b34da6a3ce929d0e0e4736"
    made = trace_id_from("00-nothex-00f067aa0ba902b7-01")
    assert len(made) == 32 and made != trace_id_from(None)
    assert trace_id_from("00-" + "0" * 32 + "-00f067aa0ba902b7-01") != "0" * 32


@pytest.mark.slow
def test_a_served_platform_logs_only_json_lines_each_with_the_requests_trace_id(tmp_path):
    database = migrated_database(tmp_path)
    platform = PlatformProcess(tmp_path, database.url, env={"LOG_FORMAT": "json", "LOG_LEVEL": "INFO"})
    try:
        token = platform.seed()[0]["tokens"]["reader"]
        platform.start()

        async def boom() -> httpx2.Response:
            async with httpx2.AsyncClient(timeout=30) as http:
                return await http.get(
                    f"{platform.base_url}/t/acme/apps/cases/boom",
                    headers={"Authorization": f"Bearer {token}", "traceparent": TRACEPARENT},
                )

        failed = anyio.run(boom)
        assert failed.status_code == 500
        assert failed.headers["content-type"] == "application/problem+json", failed.text
        error_id = failed.json()["errorId"]
        httpx2.get(f"{platform.base_url}/healthz", timeout=10)
    finally:
        platform.stop()
        database.drop()
    text_lines = platform.log_path.read_text().splitlines()
    not_json = [text for text in text_lines if not text.startswith("{")]
    assert not not_json, not_json
    lines = [json.loads(text) for text in text_lines]
    assert lines and all({"error_id", "trace_id", "message", "level"} <= line.keys() for line in lines)
    traced = [line for line in lines if line["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"]
    assert any(line["error_id"] == error_id and line["logger"] == "apps_runtime.dispatch" for line in traced)
    assert any(
        line["logger"] == "uvicorn.access" and "/t/acme/apps/cases/boom" in line["message"] for line in traced
    )
