"""The builder's tenant share: at most BUILDER_CALLS_PER_TENANT of a tenant's calls run at once."""

from __future__ import annotations

import threading

import anyio

from builder.checks import check_builder_settings
from builder.threads import in_thread


def overlapped(tenants: tuple[int, int], wait_s: float) -> bool:
    """Whether the second call started while the first was still running."""
    second_started = threading.Event()

    def first() -> bool:
        return second_started.wait(timeout=wait_s)

    def second() -> None:
        second_started.set()

    async def both() -> bool:
        async with anyio.create_task_group() as group:
            results: list[bool] = []

            async def run_first() -> None:
                results.append(await in_thread(first, tenant_id=tenants[0]))

            group.start_soon(run_first)
            await anyio.sleep(0)  # the first call takes its token before the second asks
            group.start_soon(lambda: in_thread(second, tenant_id=tenants[1]))
        return results[0]

    return anyio.run(both)


def test_one_tenants_calls_wait_for_its_share(settings):
    settings.BUILDER_CALLS_PER_TENANT = 1
    assert overlapped((901, 901), wait_s=0.5) is False  # the second could not start at all meanwhile


def test_other_tenants_and_a_larger_share_run_alongside(settings):
    settings.BUILDER_CALLS_PER_TENANT = 1
    assert overlapped((902, 903), wait_s=30) is True
    settings.BUILDER_CALLS_PER_TENANT = 2
    assert overlapped((904, 904), wait_s=30) is True


def test_the_share_is_bounded(settings):
    settings.BUILDER_CALLS_PER_TENANT = 0
    [error] = check_builder_settings(None)
    assert error.id == "builder.E001" and "BUILDER_CALLS_PER_TENANT" in error.msg
