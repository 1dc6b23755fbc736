"""The one rule for a member's share of a tenant-wide cap: a fraction, at least 1, below the cap."""

import pytest

from core.member_shares import member_share


@pytest.mark.parametrize(
    ("cap", "percent", "share"),
    [
        (20, 25, 5),  # the task queue
        (300, 25, 75),  # runs a minute
        (1000, 25, 250),  # unfinished runs, error records
        (3, 25, 1),  # rounded down, at least 1
        (2, 99, 1),  # strictly below the cap
        (4, 99, 3),
        (10, 50, 5),
        (1, 25, 1),  # a cap of one cannot be shared below itself
    ],
)
def test_a_members_share_is_a_fraction_of_the_cap_at_least_one_and_below_it(settings, cap, percent, share):
    settings.TENANT_MEMBER_SHARE_PERCENT = percent
    assert member_share(cap) == share


def test_no_percentage_lets_one_member_take_a_whole_cap(settings):
    for percent in range(1, 100):
        settings.TENANT_MEMBER_SHARE_PERCENT = percent
        assert all(1 <= member_share(cap) < cap for cap in range(2, 200))
