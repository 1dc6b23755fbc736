"""``core.caches.BoundedCache``: the platform's one policy for in-process caches."""

from __future__ import annotations

import threading

import pytest

from core.caches import BoundedCache


def test_a_full_cache_drops_the_least_recently_used_entry_only():
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recently used

    cache.put("c", 3)

    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == (1, None, 3, 2)


def test_put_returns_the_value_it_keeps():
    cache: BoundedCache[str, list] = BoundedCache(1)
    value = [1]
    assert cache.put("k", value) is value and cache.get("k") is value


def test_a_cache_without_room_is_refused():
    with pytest.raises(ValueError):
        BoundedCache(0)


def test_threads_hammering_one_cache_leave_it_bounded_and_consistent():
    cache: BoundedCache[int, int] = BoundedCache(64)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for n in range(5000):
                key = (n * 7 + offset) % 200
                cache.put(key, key)
                found = cache.get((key + 1) % 200)
                assert found is None or found == (key + 1) % 200
        except BaseException as err:  # noqa: BLE001 - reported to the test thread below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == [] and len(cache) == 64
