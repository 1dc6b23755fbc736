"""The Hypothesis profiles of the fuzz suite: bounded and reproducible in CI, deep on demand.

``fuzz`` (the default here): few examples, no deadline (a live server's latency is not the property
under test), derandomized so CI sees the same cases on every run, and no example database written
into the checkout. For a longer local hunt: ``pytest tests/fuzz --hypothesis-profile=fuzz-deep``
(random, 1,000 examples a test; add ``--hypothesis-seed=N`` to replay a run).
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
settings.register_profile(
    "fuzz", max_examples=30, deadline=None, derandomize=True, database=None, suppress_health_check=_QUIET
)
settings.register_profile(
    "fuzz-deep",
    max_examples=1000,
    deadline=None,
    derandomize=False,
    database=None,
    suppress_health_check=_QUIET,
)


def fuzz_settings(**overrides) -> settings:
    """The ``fuzz`` profile with ``overrides`` (example counts are ignored under ``fuzz-deep``)."""
    if settings.get_current_profile_name() == "fuzz-deep":
        overrides.pop("max_examples", None)
        return settings(settings.get_profile("fuzz-deep"), **overrides)
    return settings(settings.get_profile("fuzz"), **overrides)
