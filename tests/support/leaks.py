"""What a stack trace or a host path looks like in an answer sent to a caller."""

from __future__ import annotations

from tests.support.platform_process import ROOT

# A bundle's own "server/x.py" in a message is fine; a trace frame ('File "...", line N') is not.
LEAK_MARKERS = ("Traceback", 'File "', '.py", line', "site-packages", "/work/", str(ROOT))


def leaks(answer: str, sent: str = "", extra: tuple[str, ...] = ()) -> list[str]:
    """Markers of a trace or host path in ``answer`` that the caller did not send itself."""
    return [marker for marker in (*LEAK_MARKERS, *extra) if marker in answer and marker not in sent]
