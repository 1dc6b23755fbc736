"""Runs untrusted tenant handler code out of the web process.

Imports nothing from Django or the rest of the platform (a test proves it). See ``supervisor.Sandbox``.
"""

from .exceptions import BrokerError, HandlerFailed, RequestTooLarge
from .invocation import Broker, Invocation, Outcome
from .limits import SandboxLimits
from .supervisor import Sandbox, get_sandbox

__all__ = [
    "Broker",
    "BrokerError",
    "HandlerFailed",
    "Invocation",
    "Outcome",
    "RequestTooLarge",
    "Sandbox",
    "SandboxLimits",
    "get_sandbox",
]
