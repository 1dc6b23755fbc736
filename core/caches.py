"""Bounded in-process caches: one policy for the platform, least recently used out first."""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

from cachetools import LRUCache

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """At most ``size`` entries; when full, the least recently used one goes to make room.

    Every operation takes a lock: cachetools' caches reorder themselves on a read, and the gateway
    reads these from its worker threads.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a cache holds at least one entry, not {size}")
        self._entries: LRUCache[K, V] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` under ``key``; returns it."""
        with self._lock:
            self._entries[key] = value
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        return int(self._entries.maxsize)
