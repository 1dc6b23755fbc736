"""Per-invocation resource limits."""

from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class SandboxLimits:
    """What one handler invocation may use. All limits are enforced outside the handler's control."""

    timeout_ms: int = 10_000  # wall clock, enforced by killing the child
    memory_mb: int = 256  # RLIMIT_AS of the child (virtual memory, includes the interpreter)
    max_request_bytes: int = 1 * MIB  # JSON request; larger raises RequestTooLarge before forking
    max_response_bytes: int = 4 * MIB  # JSON result body; larger fails with output_too_large
    max_log_bytes: int = 64 * KIB  # captured stdout+stderr; the rest is dropped
    max_data_calls: int = 1000  # broker calls per invocation; beyond, the SDK call raises LimitExceeded
    # Threads at once, the handler's main thread included (RLIMIT_NPROC of the call's own uid: tiers 1-2
    # when the platform runs as root; tier 3 allows no thread at all). Beyond, starting one raises
    # RuntimeError in the handler.
    max_threads: int = 32

    def __post_init__(self) -> None:
        for name in ("timeout_ms", "memory_mb", "max_request_bytes", "max_response_bytes", "max_threads"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ValueError(f"SandboxLimits.{name} must be a positive int, got {value!r}")
        for name in ("max_log_bytes", "max_data_calls"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ValueError(f"SandboxLimits.{name} must be a non-negative int, got {value!r}")
