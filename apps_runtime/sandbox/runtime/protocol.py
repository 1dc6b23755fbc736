"""Length-prefixed JSON frames, shared by the host and the child.

A frame is a 4-byte big-endian payload length followed by a UTF-8 JSON payload. Reads use raw ``os.read``
with our own buffer: a buffered reader hides bytes from ``select``/``poll`` and causes spurious timeouts.
"""

import json
import os
import struct

HEADER = struct.Struct(">I")

# Exit codes of a child, read by the host from the zygote's exit report.
EXIT_OK = 0
EXIT_INTERNAL = 70  # the sandbox itself failed in the child
EXIT_NO_MEMORY = 86  # out of memory before a result could be sent (host: handler_resource_limit)

# Frames are ASCII-only JSON (ensure_ascii): a lone surrogate in a string then round-trips instead of
# failing at UTF-8 encoding time.
_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


class FrameTooLarge(Exception):
    """A frame header announced more bytes than the reader accepts."""

    def __init__(self, size: int, limit: int):
        self.size = size
        self.limit = limit
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit} bytes")


def dumps(value: object) -> bytes:
    """Encode ``value`` as a frame payload.

    Raises:
        TypeError, ValueError: ``value`` is not JSON (a set, an object, NaN, ...).
    """
    return _encoder.encode(value).encode("ascii")


def pack(payload: bytes) -> bytes:
    """Prefix ``payload`` with its length header."""
    return HEADER.pack(len(payload)) + payload


def write_frame(fd: int, payload: bytes) -> None:
    """Write one frame to a blocking fd, looping over short writes."""
    view = memoryview(pack(payload))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks = []
    remaining = size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, limit: int | None = None) -> bytes | None:
    """Read one frame's payload from a blocking fd; ``None`` on end of file.

    Raises:
        FrameTooLarge: the header announces more than ``limit`` bytes.
        EOFError: the stream ended inside a frame.
    """
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if limit is not None and size > limit:
        raise FrameTooLarge(size, limit)
    payload = _read_exactly(fd, size)
    if payload is None:
        raise EOFError("stream ended inside a frame")
    return payload


class FrameDecoder:
    """Incremental decoder for a non-blocking stream: feed bytes, get whole payloads back."""

    def __init__(self, limit: int):
        self._limit = limit
        self._buffer = bytearray()
        self._need: int | None = None  # payload size of the frame being read, once its header is in

    def feed(self, data: bytes) -> list[bytes]:
        """Add ``data`` and return the payloads completed by it, in order.

        Raises:
            FrameTooLarge: a header announces more than the decoder's limit; the stream is then unusable.
        """
        self._buffer += data
        payloads = []
        while True:
            if self._need is None:
                if len(self._buffer) < HEADER.size:
                    return payloads
                (self._need,) = HEADER.unpack_from(self._buffer)
                del self._buffer[: HEADER.size]
                if self._need > self._limit:
                    raise FrameTooLarge(self._need, self._limit)
            if len(self._buffer) < self._need:
                return payloads
            payloads.append(bytes(self._buffer[: self._need]))
            del self._buffer[: self._need]
            self._need = None

    @property
    def pending(self) -> bool:
        """True while a partial frame is buffered."""
        return bool(self._buffer) or self._need is not None
