"""Fault injection: the platform served in a process of its own, on a database of its own, to kill."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.support.platform_process import Database, PlatformProcess, migrated_database


@dataclass(frozen=True)
class Killable:
    """A served platform with tenant ``acme`` (the test app, a token per person of ``platform_seed``)."""

    platform: PlatformProcess
    database: Database
    tokens: dict[str, str]

    @property
    def base_url(self) -> str:
        return self.platform.base_url


@pytest.fixture
def killable(tmp_path) -> Killable:
    database = migrated_database(tmp_path)
    platform = PlatformProcess(tmp_path, database.url)
    try:
        tokens = platform.seed()[0]["tokens"]
        platform.start()
        yield Killable(platform, database, tokens)
    finally:
        platform.stop()
        database.drop()
