"""What a caller hands the sandbox, and what it gets back."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .limits import SandboxLimits

# broker(op, args) -> JSON result. Raises BrokerError to fail the data call inside the handler. The callable
# is the capability: it is bound to the tenant, app and caller; the child can name none of them.
Broker = Callable[[str, dict], Any]


@dataclass(frozen=True)
class Invocation:
    """One call of one handler."""

    bundle_dir: str  # absolute dir of the app version's files; sys.path[0] in the child
    handler: str  # path of the handler file relative to bundle_dir, e.g. "server/cases/search.py"
    request: dict  # {"method", "path", "body", "query", "params", "tool", "user"}, JSON-able
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    # Whose run this is, for fair share (at most Sandbox.max_concurrent_per_tenant in flight per key);
    # None: not counted against any tenant.
    tenant_key: str | None = None
    # One tenant's app version (e.g. "<tenant id>:<app id>:<version id>:"): calls with the same key (and the
    # same bundle and limits) may share a warm worker, whose module globals persist between them. None: a
    # fresh child for this call alone (the app's or route's ``"isolation": "call"``).
    warm_key: str | None = None


@dataclass
class Outcome:
    """A handler that ran to completion (including a UserError or an uncaught records error)."""

    status: int
    body: Any
    logs: str
    duration_ms: float
    asks: Any = None  # the questions of a handler that asked instead of answering (``request.ask``)
