"""App version files: packed into one archive in the database, unpacked once per host for handlers."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from django.conf import settings

from apps_runtime.models import AppVersion

# Folders this process has seen unpacked. Nothing removes one (a content hash's files never change),
# so every call after the first skips the stat, which gives up the GIL to the other threads.
_unpacked: set[Path] = set()


def pack_files(files: dict[str, bytes]) -> tuple[bytes, str]:
    """A deterministic zip of the files and its SHA-256."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[path])
    data = buffer.getvalue()
    return data, hashlib.sha256(data).hexdigest()


def unpack_files(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def bundle_dir(version: AppVersion) -> Path:
    """The version's files on local disk (read-only), unpacked on first use.

    Keyed by content hash, so every replica unpacks the same bytes to the same place and a
    redeploy of identical files reuses the folder.
    """
    root = Path(settings.SANDBOX_BUNDLE_DIR)
    target = root / version.content_hash
    if target in _unpacked:
        return target
    if target.is_dir():
        _unpacked.add(target)
        return target
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=root))
    try:
        for name, content in unpack_files(bytes(version.bundle)).items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            path.chmod(0o444)
        os.chmod(staging, 0o555)
        try:
            staging.rename(target)
        except OSError:  # another thread or process unpacked it first
            _remove(staging)
    except BaseException:
        _remove(staging)
        raise
    _unpacked.add(target)
    return target


def _remove(path: Path) -> None:
    for dirpath, _, _ in os.walk(path):
        os.chmod(dirpath, 0o755)
    shutil.rmtree(path, ignore_errors=True)
