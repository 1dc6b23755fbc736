"""Five-field cron expressions for app jobs: ``minute hour day-of-month month day-of-week``.

Each field is a comma-separated list of items; an item is ``*``, ``*/n``, a value ``a``, a range
``a-b`` or a stepped range ``a-b/n``. Months accept ``jan``..``dec`` and days of the week
``sun``..``sat`` (any case); day of week 0 and 7 are both Sunday. As in Vixie cron, when both
day of month and day of week are restricted, a day matching either one matches.
Macros such as ``@daily`` and ``a/n`` without a range are not supported.
"""

import re
from dataclasses import dataclass
from datetime import datetime

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    names_start: int = 0


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day of month", 1, 31),
    _Field("month", 1, 12, _MONTHS, 1),
    _Field("day of week", 0, 7, _DAYS, 0),
)
_ITEM = re.compile(r"(?P<start>\*|[A-Za-z0-9]+)(?:-(?P<end>[A-Za-z0-9]+))?(?:/(?P<step>[0-9]+))?")


class InvalidCronExpression(ValueError):
    """A schedule that is not a valid five-field cron expression."""

    def __init__(self, expr: object, reason: str):
        self.expr = expr
        self.reason = reason
        super().__init__(f"invalid cron expression {expr!r}: {reason}")


@dataclass(frozen=True)
class CronSchedule:
    """The values each field allows (day of week: 0 is Sunday, 7 is folded into 0)."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days_of_month: frozenset[int]
    months: frozenset[int]
    days_of_week: frozenset[int]
    day_of_month_restricted: bool
    day_of_week_restricted: bool

    def matches(self, moment: datetime) -> bool:
        """Whether the job is due in the minute of ``moment``."""
        if moment.minute not in self.minutes or moment.hour not in self.hours:
            return False
        if moment.month not in self.months:
            return False
        dom = moment.day in self.days_of_month
        dow = (moment.isoweekday() % 7) in self.days_of_week
        if self.day_of_month_restricted and self.day_of_week_restricted:
            return dom or dow
        return dom and dow


def parse_cron(expr: str) -> CronSchedule:
    """Parse a five-field cron expression.

    Raises:
        InvalidCronExpression: ``expr`` is malformed; ``reason`` says which field and what to change.
    """
    if not isinstance(expr, str):
        raise InvalidCronExpression(expr, "must be a string such as '0 3 * * *'")
    parts = expr.split()
    if len(parts) != 5:
        raise InvalidCronExpression(
            expr,
            f"has {len(parts)} field{'s' if len(parts) != 1 else ''}; use five: "
            "minute hour day-of-month month day-of-week, e.g. '0 3 * * *'",
        )
    values = [_parse_field(expr, text, spec) for text, spec in zip(parts, _FIELDS, strict=True)]
    days_of_week = frozenset(0 if day == 7 else day for day in values[4])
    return CronSchedule(
        minutes=values[0],
        hours=values[1],
        days_of_month=values[2],
        months=values[3],
        days_of_week=days_of_week,
        day_of_month_restricted=not parts[2].startswith("*"),
        day_of_week_restricted=not parts[4].startswith("*"),
    )


def _parse_field(expr: str, text: str, spec: _Field) -> frozenset[int]:
    allowed: set[int] = set()
    for item in text.split(","):
        match = _ITEM.fullmatch(item)
        if not match:
            raise InvalidCronExpression(
                expr, f"{spec.name} item {item!r} is malformed: use *, */n, a value, a-b or a-b/n"
            )
        start, end, step = match.group("start", "end", "step")
        if start == "*":
            if end is not None:
                raise InvalidCronExpression(expr, f"{spec.name} item {item!r}: '*' cannot start a range")
            low, high = spec.low, spec.high
        else:
            low = _value(expr, start, spec)
            high = _value(expr, end, spec) if end is not None else low
            if step is not None and end is None:
                raise InvalidCronExpression(
                    expr,
                    f"{spec.name} item {item!r}: a step needs '*' or a range, "
                    f"e.g. '{start}-{spec.high}/{step}'",
                )
            if low > high:
                raise InvalidCronExpression(
                    expr, f"{spec.name} range {item!r} runs backwards: write the smaller value first"
                )
        increment = 1
        if step is not None:
            increment = int(step)
            if not 1 <= increment <= spec.high - spec.low + 1:
                raise InvalidCronExpression(
                    expr, f"{spec.name} step {increment} must be between 1 and {spec.high - spec.low + 1}"
                )
        allowed.update(range(low, high + 1, increment))
    return frozenset(allowed)


def _value(expr: str, token: str, spec: _Field) -> int:
    if token.isdigit():
        number = int(token)
    elif token.lower() in spec.names:
        number = spec.names.index(token.lower()) + spec.names_start
    else:
        hint = f" or a name ({', '.join(spec.names)})" if spec.names else ""
        raise InvalidCronExpression(expr, f"{spec.name} value {token!r} is not a number{hint}")
    if not spec.low <= number <= spec.high:
        raise InvalidCronExpression(
            expr, f"{spec.name} value {number} is out of range: use {spec.low}-{spec.high}"
        )
    return number
