from datetime import datetime

import pytest

from apps_runtime.manifest.cron import InvalidCronExpression, parse_cron


def test_fields_expand_to_the_values_they_allow():
    schedule = parse_cron("*/15 8-10 1,15 jan-mar mon-fri")
    assert schedule.minutes == {0, 15, 30, 45}
    assert schedule.hours == {8, 9, 10}
    assert schedule.days_of_month == {1, 15}
    assert schedule.months == {1, 2, 3}
    assert schedule.days_of_week == {1, 2, 3, 4, 5}


def test_stepped_ranges_and_names_in_any_case():
    schedule = parse_cron("10-30/10 * * DEC Sun")
    assert schedule.minutes == {10, 20, 30}
    assert schedule.months == {12}
    assert schedule.days_of_week == {0}


def test_seven_is_sunday_too():
    assert parse_cron("0 0 * * 7").days_of_week == {0}
    assert parse_cron("0 0 * * 5-7").days_of_week == {5, 6, 0}


def test_a_schedule_matches_the_minutes_it_names():
    nightly = parse_cron("0 3 * * *")
    assert nightly.matches(datetime(2025, 1, 7, 3, 0))
    assert not nightly.matches(datetime(2025, 1, 7, 3, 1))
    assert not nightly.matches(datetime(2025, 1, 7, 4, 0))


def test_day_of_month_or_day_of_week_when_both_are_restricted():
    schedule = parse_cron("0 0 13 * fri")
    assert schedule.matches(datetime(2025, 6, 13, 0, 0))  # a Friday the 13th
    assert schedule.matches(datetime(2025, 1, 13, 0, 0))  # a Monday the 13th
    assert schedule.matches(datetime(2025, 1, 17, 0, 0))  # a Friday
    assert not schedule.matches(datetime(2025, 1, 14, 0, 0))


def test_only_day_of_week_when_day_of_month_is_a_star():
    weekdays = parse_cron("30 9 * * 1-5")
    assert weekdays.matches(datetime(2025, 1, 6, 9, 30))  # Monday
    assert not weekdays.matches(datetime(2025, 1, 5, 9, 30))  # Sunday


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("0 3 * *", "has 4 fields"),
        ("60 * * * *", "minute value 60 is out of range"),
        ("* * * * funday", "day of week value 'funday'"),
        ("5-1 * * * *", "runs backwards"),
        ("*/0 * * * *", "step 0"),
        ("1/5 * * * *", "a step needs"),
    ],
)
def test_errors_name_the_field_and_what_to_change(expr, fragment):
    with pytest.raises(InvalidCronExpression) as info:
        parse_cron(expr)
    assert fragment in info.value.reason
    assert info.value.expr == expr


def test_a_non_string_is_invalid():
    with pytest.raises(InvalidCronExpression):
        parse_cron(None)
