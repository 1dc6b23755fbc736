"""Tracebacks for tenants: only frames in the bundle's own files, with bundle-relative paths."""

import copy
import os
import traceback

MAX_TRACE_CHARS = 16 * 1024


class Scrubber:
    """Rewrites host paths that could appear in a trace or an exception message."""

    def __init__(self, bundle_dir: str, hidden: dict[str, str]):
        self.bundle_dir = bundle_dir.rstrip(os.sep)
        # Longest first, so a path nested in another hidden one is replaced by its own label.
        self._hidden = sorted(hidden.items(), key=lambda item: len(item[0]), reverse=True)

    def relative(self, filename: str) -> str | None:
        """The bundle-relative path of ``filename``, or None when it is outside the bundle."""
        if not filename or not os.path.isabs(filename):
            return None
        prefix = self.bundle_dir + os.sep
        if filename.startswith(prefix):
            return filename[len(prefix) :]
        return None

    def text(self, text: str) -> str:
        """Replace the bundle dir by nothing (paths become relative) and other host paths by labels."""
        text = text.replace(self.bundle_dir + os.sep, "").replace(self.bundle_dir, ".")
        for path, label in self._hidden:
            text = text.replace(path, label)
        return text


def _trim(te: traceback.TracebackException, scrub: Scrubber, seen: set[int]) -> None:
    if id(te) in seen:
        return
    seen.add(id(te))
    kept = []
    for frame in te.stack:
        rel = scrub.relative(frame.filename)
        if rel is not None:
            frame = copy.copy(frame)  # keeps the looked-up line and the caret columns
            frame.filename = rel
            kept.append(frame)
    te.stack = traceback.StackSummary.from_list(kept)
    if getattr(te, "filename", None):  # SyntaxError and friends carry their own location
        te.filename = scrub.relative(te.filename) or "<platform>"
    for nested in (te.__cause__, te.__context__, *(getattr(te, "exceptions", None) or ())):
        if nested is not None:
            _trim(nested, scrub, seen)


def _bounded(text: str) -> str:
    if len(text) <= MAX_TRACE_CHARS:
        return text
    return "...\n" + text[-MAX_TRACE_CHARS:]


def tenant_trace(exc: BaseException, scrub: Scrubber) -> str:
    """Format ``exc`` for the tenant: bundle frames only, relative paths, host paths scrubbed."""
    te = traceback.TracebackException.from_exception(exc)
    _trim(te, scrub, set())
    return _bounded(scrub.text("".join(te.format())))


def full_trace(exc: BaseException) -> str:
    """Format ``exc`` untouched, for the platform's own log."""
    return _bounded("".join(traceback.format_exception(exc)))
