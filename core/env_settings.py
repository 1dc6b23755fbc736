"""Environment-driven settings declared once: each with its variable, type, default and bounds.

A group (a ``SettingsGroup`` subclass per area, in the ``conf.py`` of the app that reads it) lists its
settings as class attributes named like the Django setting and its environment variable::

    class RecordsSettings(SettingsGroup):
        RECORDS_QUERY_MAX_WHERE_KEYS = Int(20, low=1)

``lowcode_platform/settings.py`` reads each group from ``os.environ`` once, at start-up, and exposes
its values as module-level settings. A value that does not parse or breaks its bounds stops start-up
with ``ImproperlyConfigured`` naming the variable, the value and what it must be; the app's system
check applies the same bounds to the settings as they are when checks run (tests override them), with
``core.setting_bounds.group_errors``. Zulip's split, in short: raw access here, declarations beside
their readers, computed values in ``settings.py``. Imports no more of Django than its exceptions: the
settings module loads it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Self, TypeVar, overload

from django.core.exceptions import ImproperlyConfigured

T = TypeVar("T")


@dataclass(frozen=True)
class Bound:
    """A numeric setting's type and range (``high`` None: no upper bound)."""

    kind: type
    low: float
    high: float | None = None

    def describe(self) -> str:
        what = "an integer" if self.kind is int else "a number"
        if self.high is None:
            return f"{what} of at least {self.low}"
        return f"{what} from {self.low} to {self.high}"

    def allows(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.kind is int and not isinstance(value, int):
            return False
        return self.low <= value and (self.high is None or value <= self.high)


class EnvSetting(Generic[T]):
    """One setting read from the environment variable of its name; blank or unset: its default."""

    what: ClassVar[str] = "a value"

    def __init__(
        self,
        default: T | Callable[[Mapping[str, Any]], T],
        *,
        low: float | None = None,
        high: float | None = None,
    ):
        # A default may follow settings read before it (of its group, or given to the group): a
        # callable gets their values by name.
        self.default = default
        self.bound = Bound(self.kind(), low, high) if low is not None else None
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: object, owner: type) -> T: ...
    def __get__(self, instance: object | None, owner: type) -> Self | T:
        if instance is None:
            return self
        return instance.__dict__[self.name]

    def kind(self) -> type:
        return object

    def parse(self, text: str) -> T:
        """``text`` (stripped, not blank) as this setting's value.

        Raises:
            ValueError: the text is not such a value.
        """
        raise NotImplementedError

    def describe(self) -> str:
        """What a value must be, as the error messages say it."""
        return self.bound.describe() if self.bound is not None else self.what

    def read(self, environ: Mapping[str, str], known: Mapping[str, Any], name: str = "") -> T:
        """This setting's value in ``environ`` (``known``: the values a callable default may follow).

        Raises:
            ImproperlyConfigured: the value does not parse or is out of bounds; names variable and value.
        """
        name = name or self.name
        raw = environ.get(name)
        if raw is None or raw.strip() == "":
            return self.default(known) if callable(self.default) else self.default
        try:
            value = self.parse(raw.strip())
        except ValueError as err:
            raise ImproperlyConfigured(f"{name}={raw!r} is not {self.describe()}") from err
        if self.bound is not None and not self.bound.allows(value):
            raise ImproperlyConfigured(f"{name}={raw!r} is not {self.describe()}")
        return value


class Int(EnvSetting[int]):
    what = "an integer"

    def kind(self) -> type:
        return int

    def parse(self, text: str) -> int:
        return int(text)


class Float(EnvSetting[float]):
    what = "a number"

    def kind(self) -> type:
        return float

    def parse(self, text: str) -> float:
        return float(text)


class Bool(EnvSetting[bool]):
    what = "a boolean (use true or false)"

    def parse(self, text: str) -> bool:
        value = text.lower()
        if value in {"1", "true", "yes", "on"}:
            return True
        if value in {"0", "false", "no", "off"}:
            return False
        raise ValueError(text)


class Text(EnvSetting[str]):
    what = "a text"

    def parse(self, text: str) -> str:
        return text


class OptionalText(EnvSetting[str | None]):
    """A text whose absence means something (a URL that turns a feature on): None when unset."""

    what = "a text"

    def parse(self, text: str) -> str | None:
        return text


class Choice(EnvSetting[str]):
    def __init__(self, default: str, choices: tuple[str, ...]):
        super().__init__(default)
        self.choices = choices

    def describe(self) -> str:
        return "one of " + ", ".join(self.choices)

    def parse(self, text: str) -> str:
        if text not in self.choices:
            raise ValueError(text)
        return text


class Items(EnvSetting[list[str]]):
    what = "a comma-separated list"

    def parse(self, text: str) -> list[str]:
        return [item.strip() for item in text.split(",") if item.strip()]


class IntRange(EnvSetting[tuple[int, int] | None]):
    """``FIRST-LAST`` (e.g. ``1879048192-1879113727``) as a pair of ints; None when unset."""

    what = "a range FIRST-LAST of integers"

    def parse(self, text: str) -> tuple[int, int] | None:
        first, _, last = text.partition("-")
        return int(first), int(last)


class Json(EnvSetting[Any]):
    what = "valid JSON"

    def parse(self, text: str) -> Any:
        return json.loads(text)


class SettingsGroup:
    """One area's settings; an instance holds their values read from an environment."""

    def __init__(self, environ: Mapping[str, str], **given: Any):
        """Read every setting of the group, in declaration order (``given``: values defaults may follow).

        Raises:
            ImproperlyConfigured: one or more values are bad; the message names each, with its bounds.
        """
        known = dict(given)
        problems = []
        for name, setting in self.declared().items():
            try:
                known[name] = self.__dict__[name] = setting.read(environ, known)
            except ImproperlyConfigured as err:
                problems.append(str(err))
        if problems:
            raise ImproperlyConfigured("; ".join(problems))

    @classmethod
    def declared(cls) -> dict[str, EnvSetting[Any]]:
        """The group's settings by name, in declaration order."""
        return {
            name: value
            for klass in reversed(cls.__mro__)
            for name, value in vars(klass).items()
            if isinstance(value, EnvSetting)
        }

    @classmethod
    def bounds(cls) -> dict[str, Bound]:
        return {name: setting.bound for name, setting in cls.declared().items() if setting.bound is not None}
