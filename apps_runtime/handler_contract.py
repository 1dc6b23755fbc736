"""What the host shares with tenant handlers: data-call ops, notices, log levels, MIME types, asks,
outbound requests' refusals, frames.

The handler's side defines them (``apps_runtime.sandbox.runtime``: the child's protocol and the SDK
handlers import), since the child imports nothing of the host. Host code reads them here, the one
door into the child runtime (``lint-imports``: "Only the sandbox imports its child runtime"), so a
change to the child's modules shows up in one place.
"""

from apps_runtime.sandbox.runtime.protocol import (
    EGRESS_REFUSED,
    EGRESS_RETRYABLE,
    HTTP_REQUEST,
    JOBS_ENQUEUE,
    LOG,
    LOG_LEVELS,
    MAX_LOG_NOTICES,
    MAX_NOTICE_CHARS,
    MAX_VALUE_DEPTH,
    PROGRESS,
    PROGRESS_BURST,
    RECORDS_CREATE,
    RECORDS_DELETE,
    RECORDS_GET,
    RECORDS_QUERY,
    RECORDS_UPDATE,
    FrameRejected,
    decode_frame,
    progress_pacer,
)
from apps_runtime.sandbox.runtime.sdk import (
    AUDIO_MIME_TYPES,
    CAPABILITY_OF,
    ELICIT,
    IMAGE_MIME_TYPES,
    ROOTS,
    SAMPLE,
)

__all__ = [
    "AUDIO_MIME_TYPES",
    "CAPABILITY_OF",
    "EGRESS_REFUSED",
    "EGRESS_RETRYABLE",
    "ELICIT",
    "HTTP_REQUEST",
    "IMAGE_MIME_TYPES",
    "JOBS_ENQUEUE",
    "LOG",
    "LOG_LEVELS",
    "MAX_LOG_NOTICES",
    "MAX_NOTICE_CHARS",
    "MAX_VALUE_DEPTH",
    "PROGRESS",
    "PROGRESS_BURST",
    "RECORDS_CREATE",
    "RECORDS_DELETE",
    "RECORDS_GET",
    "RECORDS_QUERY",
    "RECORDS_UPDATE",
    "ROOTS",
    "SAMPLE",
    "FrameRejected",
    "decode_frame",
    "progress_pacer",
]
