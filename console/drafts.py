"""An app's files as the editor holds them: the deployed version's, or the admin's draft.

A draft lives in the admin's server-side session (bounded like a bundle): saving one changes
nothing for callers. Checking and deploying read the draft through the deploy's own bundle reader
and validator, so the editor refuses exactly what ``manage.py deploy`` and the API refuse.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from django.contrib.sessions.backends.base import SessionBase

from apps_runtime.bundles import pack_files, unpack_files
from apps_runtime.deploy import validate_bundle
from apps_runtime.manifest import Bundle, DeployRejected, Problem, read_bundle_bytes
from apps_runtime.manifest.bundle import MAX_TOTAL_BYTES
from apps_runtime.models import App
from console.json_lines import line_of, pointer_lines
from tenants.models import Tenant

MANIFEST = "app.json"
EDITABLE_SUFFIXES = (".json", ".py", ".html", ".md", ".txt", ".js", ".css")


@dataclass(frozen=True)
class Finding:
    """A validator's problem or warning, placed at its line of ``app.json``."""

    pointer: str
    message: str
    line: int
    warning: bool = False


def _session_key(tenant: Tenant, app: str) -> str:
    return f"console.draft:{tenant.pk}:{app}"


def deployed_files(app: App) -> dict[str, str]:
    """The active version's text files (path -> text); none for an undeployed app."""
    if app.active_version_id is None:
        return {}
    files = unpack_files(bytes(app.active_version.bundle))
    return {path: data.decode("utf-8") for path, data in sorted(files.items()) if _is_text(path, data)}


def _is_text(path: str, data: bytes) -> bool:
    if not path.endswith(EDITABLE_SUFFIXES):
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def draft(session: SessionBase, tenant: Tenant, app: str) -> dict[str, str] | None:
    return session.get(_session_key(tenant, app))


def save_draft(session: SessionBase, tenant: Tenant, app: str, files: dict[str, str]) -> None:
    """Raises: DeployRejected: the draft is larger than a bundle may be."""
    if sum(len(text.encode("utf-8")) for text in files.values()) > MAX_TOTAL_BYTES:
        raise DeployRejected([Problem("/", f"the files exceed {MAX_TOTAL_BYTES} bytes, a bundle's limit")])
    session[_session_key(tenant, app)] = files


def discard_draft(session: SessionBase, tenant: Tenant, app: str) -> None:
    session.pop(_session_key(tenant, app), None)


def bundle_of(files: dict[str, str]) -> Bundle:
    """The files read by the deploy's bundle reader (paths, limits, app.json), as an upload would be.

    Raises:
        DeployRejected: app.json is not JSON (the problem names its line) or the reader refuses the files.
    """
    try:
        json.loads(files.get(MANIFEST, ""))
    except json.JSONDecodeError as err:
        raise DeployRejected([Problem("/", f"line {err.lineno}: app.json is not JSON: {err.msg}")]) from None
    archive, _ = pack_files({path: text.encode("utf-8") for path, text in files.items()})
    return read_bundle_bytes(archive)


def check(tenant: Tenant, files: dict[str, str]) -> list[Finding]:
    """Every problem and warning a deploy of ``files`` would answer, each at its line; deploys nothing.

    ``validate_bundle`` is the deploy's own validation (the validate API's too): same validator,
    wire-name checks and holders.
    """
    try:
        validation = validate_bundle(tenant, bundle_of(files))
    except DeployRejected as rejected:
        return findings(files.get(MANIFEST, ""), rejected.problems, rejected.warnings)
    return findings(files.get(MANIFEST, ""), [], validation.warnings)


def findings(manifest_text: str, problems: list[Problem], warnings: list[Problem]) -> list[Finding]:
    lines = pointer_lines(manifest_text)
    placed = []
    for problem, warning in [(p, False) for p in problems] + [(w, True) for w in warnings]:
        line = line_of(problem.pointer, lines)
        if problem.message.startswith("line ") and problem.pointer == "/":
            line = int(problem.message.split(":", 1)[0].split()[1])
        placed.append(Finding(problem.pointer, problem.message, line, warning))
    return sorted(placed, key=lambda f: (f.warning, f.line))


def diff(deployed: dict[str, str], edited: dict[str, str]) -> str:
    """A unified diff of the edited files against the deployed version ("" when they are the same)."""
    chunks = []
    for path in sorted(set(deployed) | set(edited)):
        before, after = deployed.get(path, ""), edited.get(path, "")
        if before != after:
            chunks.extend(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    f"deployed/{path}",
                    f"draft/{path}",
                )
            )
    return "".join(chunks)
