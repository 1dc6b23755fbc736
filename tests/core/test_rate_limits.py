"""The one fixed-window limiter: counts per key and window, refuses past the limit with the time left."""

from core.rate_limits import CacheCounters, FixedWindowLimiter, Limited

START = 1_800_000_000.0  # a whole minute of the Unix epoch


def test_attempts_past_the_limit_are_refused_with_the_seconds_left_in_the_window():
    limiter = FixedWindowLimiter(CacheCounters())
    seen = [limiter.hit("login:ada", 2, 60, now=START + 15) for _ in range(3)]
    assert seen == [None, None, Limited(limit=2, retry_after=45)]


def test_check_counts_nothing_and_says_whether_the_next_attempt_would_be_refused():
    limiter = FixedWindowLimiter(CacheCounters())
    assert limiter.check("register:1", 1, 3600, now=START) is None
    assert limiter.check("register:1", 1, 3600, now=START) is None
    assert limiter.hit("register:1", 1, 3600, now=START) is None
    assert limiter.check("register:1", 1, 3600, now=START + 0.5) == Limited(limit=1, retry_after=3600)


def test_a_new_window_starts_a_new_count_and_keys_count_apart():
    limiter = FixedWindowLimiter(CacheCounters())
    assert limiter.hit("a", 1, 60, now=START) is None
    assert limiter.hit("a", 1, 60, now=START + 59.5) == Limited(limit=1, retry_after=1)
    assert limiter.hit("b", 1, 60, now=START + 59.5) is None
    assert limiter.hit("a", 1, 60, now=START + 60) is None


def test_an_attempt_the_backend_could_not_count_passes():
    class Unreachable:
        def hit(self, key, ttl, now):
            return None

        def current(self, key):
            return 0

    limiter = FixedWindowLimiter(Unreachable())
    assert [limiter.hit("k", 0, 1, now=START) for _ in range(2)] == [None, None]


def test_the_limiter_reads_its_clock_when_no_moment_is_given():
    limiter = FixedWindowLimiter(CacheCounters(), clock=lambda: START + 30)
    limiter.hit("c", 0, 60)
    assert limiter.check("c", 1, 60) == Limited(limit=1, retry_after=30)
