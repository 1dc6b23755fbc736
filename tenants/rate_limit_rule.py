"""What a rate limit is: the one rule behind the manifest's tool option ``rateLimit`` and the tenant
setting ``toolRateLimit``.

It lives here, at the bottom of ``mcp_gateway -> apps_runtime -> tenants``, so the manifest schema,
the deploy validator and the settings registry check the same shape and say the same things.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PERIOD_SECONDS = {"second": 1, "minute": 60, "hour": 3600}
SCOPES = ("user", "tenant")
DEFAULT_SCOPE = "user"
# Counts are small integers in Redis or one row per window; the cap only keeps a typo (an extra
# zero or three) from reading as "no limit".
CALLS_MAX = 100_000
EXAMPLE = '{"calls": 60, "per": "minute", "scope": "user"}'

RATE_LIMIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Rate limit",
    "description": (
        "At most `calls` calls of this tool per second, minute or hour (fixed windows), counted per "
        "caller (scope user, the default) or for all callers of the tenant together (scope tenant). "
        "A call over the limit runs nothing and is told how many seconds to wait."
    ),
    "required": ["calls", "per"],
    "additionalProperties": False,
    "properties": {
        "calls": {
            "type": "integer",
            "minimum": 1,
            "maximum": CALLS_MAX,
            "description": "Calls allowed per period.",
        },
        "per": {"type": "string", "enum": list(PERIOD_SECONDS), "description": "The period."},
        "scope": {
            "type": "string",
            "enum": list(SCOPES),
            "default": DEFAULT_SCOPE,
            "description": "user: each caller has the limit; tenant: all callers share it.",
        },
    },
    "examples": [{"calls": 60, "per": "minute", "scope": "user"}],
}


@dataclass(frozen=True)
class RateLimit:
    calls: int
    per: str
    scope: str = DEFAULT_SCOPE

    @property
    def window_seconds(self) -> int:
        return PERIOD_SECONDS[self.per]

    @classmethod
    def from_json(cls, value: dict) -> RateLimit:
        """A limit from JSON that passed ``rate_limit_problems`` (a deployed tool, a stored setting)."""
        return cls(calls=value["calls"], per=value["per"], scope=value.get("scope", DEFAULT_SCOPE))

    def as_json(self) -> dict:
        return {"calls": self.calls, "per": self.per, "scope": self.scope}


def _one_of(values: tuple[str, ...] | list[str]) -> str:
    quoted = [f'"{value}"' for value in values]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def rate_limit_problems(value: object) -> list[tuple[str | None, str]]:
    """What is wrong with ``value`` as a rate limit: (key or None for the whole value, message) pairs."""
    if not isinstance(value, dict):
        return [(None, f"must be an object like {EXAMPLE}")]
    problems: list[tuple[str | None, str]] = []
    for key in ("calls", "per"):
        if key not in value:
            problems.append((key, f"missing required key {key!r}: add it, e.g. {EXAMPLE}"))
    calls = value.get("calls")
    if "calls" in value and (
        isinstance(calls, bool) or not isinstance(calls, int) or not 1 <= calls <= CALLS_MAX
    ):
        problems.append(("calls", f"calls must be a whole number from 1 to {CALLS_MAX}, not {calls!r}"))
    if "per" in value and value["per"] not in list(PERIOD_SECONDS):
        problems.append(("per", f"per must be {_one_of(list(PERIOD_SECONDS))}, not {value['per']!r}"))
    if "scope" in value and value["scope"] not in SCOPES:
        problems.append(
            (
                "scope",
                f'scope must be "user" (each caller counted apart) or "tenant" (all callers together), '
                f"not {value['scope']!r}",
            )
        )
    for key in value:
        if key not in RATE_LIMIT_SCHEMA["properties"]:
            problems.append((key, f"unknown key {key!r}: a rate limit has only calls, per and scope"))
    return problems


def rate_limit_messages(value: object) -> list[str]:
    """``rate_limit_problems`` as messages alone, for a value without a pointer (a tenant setting)."""
    return [message for _, message in rate_limit_problems(value)]
