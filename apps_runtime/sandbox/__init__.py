"""Runs untrusted tenant handler code out of the web process.

Imports nothing from Django or the rest of the platform (a test proves it). See ``supervisor.Sandbox``.
"""

from .exceptions import BrokerError, HandlerFailed, RequestTooLarge, SandboxUnavailable
from .invocation import Broker, Invocation, Outcome
from .limits import SandboxLimits
from .supervisor import Sandbox, close_sandbox, configure_sandbox, get_sandbox, pool_stats
from .tiers import TIER_NAMES

__all__ = [
    "TIER_NAMES",
    "Broker",
    "BrokerError",
    "HandlerFailed",
    "Invocation",
    "Outcome",
    "RequestTooLarge",
    "Sandbox",
    "SandboxLimits",
    "SandboxUnavailable",
    "close_sandbox",
    "configure_sandbox",
    "get_sandbox",
    "pool_stats",
]
