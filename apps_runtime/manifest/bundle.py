"""Reading an app bundle (a folder, a .zip, or a JSON mapping) safely into memory.

A bundle is untrusted input. Reading it writes nothing; anything hostile or too big is refused
with ``DeployRejected`` whose problems point at the root (``/``) and name the file:

- paths that could escape the bundle (``..``, absolute paths, drive letters, backslashes, control
  characters), symlinks and other non-regular files, encrypted or duplicate zip entries;
- more than ``max_files`` files, more than ``max_total_bytes`` in all (a zip's declared sizes are
  checked before anything is inflated, and the bytes actually read are counted too), an
  ``app.json`` over ``max_manifest_bytes``;
- a missing ``app.json``, one that is not UTF-8 (a BOM is accepted), not JSON (line and column
  given), nested deeper than ``MAX_JSON_DEPTH``, with a key repeated in one object, or not an object.

``Bundle.files`` holds every file kept, keyed by bundle-relative POSIX path, ``app.json`` included,
so storing ``files`` reproduces the bundle. ``__pycache__``, ``__MACOSX`` and ``.git`` folders and
``*.pyc`` files are skipped; other files, dotfiles included, are kept. A zip whose entries all sit in one
top-level folder holding ``app.json`` (what zipping a folder produces) is read from that folder.
"""

import io
import json
import os
import re
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apps_runtime.json_values import is_text
from apps_runtime.manifest.problems import BundleTooLarge, DeployRejected, Problem, child, pointer

MANIFEST_NAME = "app.json"
MiB = 1024 * 1024
KiB = 1024
MAX_TOTAL_BYTES = 10 * MiB
MAX_FILES = 500
MAX_MANIFEST_BYTES = 2 * 1024 * 1024  # room for ~3,000 tools
MAX_JSON_DEPTH = 64
SKIPPED_DIRS = frozenset({"__pycache__", "__MACOSX", ".git"})
SKIPPED_SUFFIXES = (".pyc",)
# A zip archive may be a little larger than its contents (headers, stored entries).
_ZIP_OVERHEAD_PER_FILE = 1024
_ZIP_OVERHEAD = 64 * KiB
_CHUNK = 64 * KiB
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:")
_ROOT = pointer()
# What the standard library's zip reader raises on a damaged or unusual archive.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    struct.error,
    EOFError,
    NotImplementedError,
    OSError,
    ValueError,
)


@dataclass(frozen=True)
class Bundle:
    """A bundle read into memory: its parsed manifest and every file it holds (``app.json`` too)."""

    manifest: dict
    files: dict[str, bytes]


@dataclass(frozen=True)
class _Limits:
    max_total_bytes: int
    max_files: int
    max_manifest_bytes: int


class _Reject(Exception):
    """Stop reading at once (a limit was hit); carries the problem."""

    def __init__(self, message: str):
        super().__init__(message)
        self.problem = Problem(_ROOT, message)


def read_bundle(
    path: str | Path,
    *,
    max_total_bytes: int = MAX_TOTAL_BYTES,
    max_files: int = MAX_FILES,
    max_manifest_bytes: int = MAX_MANIFEST_BYTES,
) -> Bundle:
    """Read a bundle folder, or a .zip file, at ``path``.

    Raises:
        DeployRejected: the path is missing, or the bundle is hostile, too big or has no valid app.json.
    """
    limits = _Limits(max_total_bytes, max_files, max_manifest_bytes)
    path = Path(path)
    if path.is_dir():
        return _finish(*_read_folder(path, limits), limits)
    if path.is_file():
        _refuse_archive_over(path.stat().st_size, limits)
        if not zipfile.is_zipfile(path):
            # The usual slip: the manifest itself instead of the folder around it.
            folder = repr(str(path.parent)) if path.name == MANIFEST_NAME else "the bundle folder"
            advice = f"pass {folder} (the folder that holds {MANIFEST_NAME}) or a .zip of it"
            raise DeployRejected([Problem(_ROOT, f"{str(path)!r} is not a .zip archive: {advice}")])
        return _read_zip(path, limits)
    raise DeployRejected([Problem(_ROOT, f"{str(path)!r} is neither a bundle folder nor a .zip file")])


def read_bundle_bytes(
    zip_bytes: bytes,
    *,
    max_total_bytes: int = MAX_TOTAL_BYTES,
    max_files: int = MAX_FILES,
    max_manifest_bytes: int = MAX_MANIFEST_BYTES,
) -> Bundle:
    """Read a bundle from the bytes of a .zip archive (e.g. an upload).

    Raises:
        DeployRejected: the bytes are not a zip, or the bundle is hostile, too big or has no valid app.json.
    """
    limits = _Limits(max_total_bytes, max_files, max_manifest_bytes)
    _refuse_archive_over(len(zip_bytes), limits)
    return _read_zip(io.BytesIO(zip_bytes), limits)


def read_bundle_upload(upload: Any) -> Bundle:
    """Read a bundle from an uploaded .zip (a Django ``UploadedFile``), refusing one too big unread.

    Raises:
        BundleTooLarge: the upload is bigger than any bundle's archive may be.
        DeployRejected: not a zip, or the bundle is hostile, too big or has no valid app.json.
    """
    _refuse_archive_over(upload.size, _Limits(MAX_TOTAL_BYTES, MAX_FILES, MAX_MANIFEST_BYTES))
    return read_bundle_bytes(upload.read())


def bundle_from_mapping(
    manifest: Any,
    files: Mapping[str, str | bytes],
    *,
    max_total_bytes: int = MAX_TOTAL_BYTES,
    max_files: int = MAX_FILES,
    max_manifest_bytes: int = MAX_MANIFEST_BYTES,
) -> Bundle:
    """Build a bundle from a manifest and ``{path: text or bytes}`` (an API that posts JSON).

    ``files`` must not hold ``app.json``: the manifest is ``manifest``, stored as indented JSON.

    Raises:
        DeployRejected: a path is hostile, a value is not text or bytes, a limit is exceeded, or the
            manifest is not a JSON object.
    """
    limits = _Limits(max_total_bytes, max_files, max_manifest_bytes)
    problems: list[Problem] = []
    if not isinstance(manifest, dict):
        problems.append(Problem(_ROOT, f"the manifest must be a JSON object, not {type(manifest).__name__}"))
    if not isinstance(files, Mapping):
        raise DeployRejected([*problems, Problem(_ROOT, "files must be an object of path -> file content")])
    contents: dict[str, bytes] = {}
    try:
        _check_count(len(files), limits)
        total = 0
        for name, content in files.items():
            issue = _path_issue(name) if isinstance(name, str) else "the path must be text"
            if issue is None and name == MANIFEST_NAME:
                issue = "send the manifest as 'manifest', not as a file"
            data = _content_bytes(content)
            if issue is None and data is None:
                issue = "the content must be UTF-8 text or bytes"
            if issue is not None:
                problems.append(Problem(_ROOT, f"file {name!r}: {issue}"))
                continue
            total += len(data)
            _check_total(total, limits)
            if not _skipped(name):
                contents[name] = data
        if isinstance(manifest, dict):
            try:
                text = json.dumps(manifest, indent=2, ensure_ascii=False, allow_nan=False)
                raw = text.encode("utf-8") + b"\n"
            except (TypeError, ValueError, RecursionError) as err:
                raise _Reject(f"the manifest is not plain JSON data: {err}") from err
            _check_manifest_size(len(raw), limits)
            _check_total(total + len(raw), limits)
            manifest = _parse_manifest(raw)
            contents[MANIFEST_NAME] = raw
    except _Reject as stop:
        problems.append(stop.problem)
    except DeployRejected as rejected:
        problems.extend(rejected.problems)
    if problems:
        raise DeployRejected(problems)
    return Bundle(manifest=manifest, files=dict(sorted(contents.items())))


def _content_bytes(content: Any) -> bytes | None:
    if isinstance(content, bytes | bytearray):
        return bytes(content)
    if isinstance(content, str):
        try:
            return content.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return None


def _zip_allowance(limits: _Limits) -> int:
    return limits.max_total_bytes + limits.max_files * _ZIP_OVERHEAD_PER_FILE + _ZIP_OVERHEAD


def _refuse_archive_over(size: int, limits: _Limits) -> None:
    """Raises: BundleTooLarge: ``size`` is more than an archive of a bundle within ``limits`` takes."""
    allowed = _zip_allowance(limits)
    if size > allowed:
        raise BundleTooLarge(
            [Problem(_ROOT, f"the archive is over {allowed} bytes: make the bundle smaller")]
        )


def _path_issue(name: str) -> str | None:
    """Why ``name`` is not a safe bundle-relative POSIX file path, or None."""
    if name == "":
        return "the path is empty"
    if _CONTROL.search(name):
        return "the path contains control characters: rename the file"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "the path is not valid UTF-8: rename the file"
    if "\\" in name:
        return "the path contains a backslash: bundles use forward slashes only"
    if name.startswith("/") or _DRIVE.match(name):
        return "the path is absolute: paths must be relative to the bundle root"
    parts = name.split("/")
    if ".." in parts:
        return "the path contains '..' and would escape the bundle"
    if any(part in ("", ".") for part in parts):
        return "the path has an empty or '.' segment: write it as a plain relative path"
    return None


def _skipped(name: str) -> bool:
    parts = name.split("/")
    return any(part in SKIPPED_DIRS for part in parts[:-1]) or name.endswith(SKIPPED_SUFFIXES)


def _check_count(count: int, limits: _Limits) -> None:
    if count > limits.max_files:
        raise _Reject(f"the bundle has more than {limits.max_files} files: remove some")


def _check_total(total: int, limits: _Limits) -> None:
    if total > limits.max_total_bytes:
        raise _Reject(f"the bundle is larger than {limits.max_total_bytes} bytes: make it smaller")


def _check_manifest_size(size: int, limits: _Limits) -> None:
    if size > limits.max_manifest_bytes:
        raise _Reject(f"{MANIFEST_NAME} is larger than {limits.max_manifest_bytes} bytes: make it smaller")


def _read_folder(root: Path, limits: _Limits) -> tuple[dict[str, bytes], list[Problem]]:
    contents: dict[str, bytes] = {}
    problems: list[Problem] = []
    total = 0
    try:
        for rel, entry in _walk(root, ""):
            where = f"{rel!r}"
            if entry.is_symlink():
                problems.append(
                    Problem(_ROOT, f"{where} is a symbolic link: replace it with the file itself")
                )
                continue
            if entry.is_dir(follow_symlinks=False):
                continue
            if not entry.is_file(follow_symlinks=False):
                problems.append(Problem(_ROOT, f"{where} is not a regular file: remove it"))
                continue
            if issue := _path_issue(rel):
                problems.append(Problem(_ROOT, f"file {where}: {issue}"))
                continue
            if _skipped(rel):
                continue
            _check_count(len(contents) + 1, limits)
            size = entry.stat(follow_symlinks=False).st_size
            _check_total(total + size, limits)
            if rel == MANIFEST_NAME:
                _check_manifest_size(size, limits)
            data = _read_capped(entry.path, limits.max_total_bytes - total)
            total += len(data)
            contents[rel] = data
    except _Reject as stop:
        problems.append(stop.problem)
    except OSError as err:
        problems.append(
            Problem(_ROOT, f"the bundle folder cannot be read ({err.strerror}): check its permissions")
        )
    return contents, problems


def _walk(root: Path, prefix: str) -> Iterable[tuple[str, os.DirEntry]]:
    """Yield (relative path, entry) for every entry below ``root``, never following symlinks."""
    with os.scandir(root) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            rel = f"{prefix}{entry.name}"
            yield rel, entry
            if (
                entry.is_dir(follow_symlinks=False)
                and not entry.is_symlink()
                and entry.name not in SKIPPED_DIRS
            ):
                yield from _walk(Path(entry.path), rel + "/")


def _read_capped(path: str, budget: int) -> bytes:
    # The file may have grown since stat(): never read more than the budget allows.
    with open(path, "rb") as handle:
        data = handle.read(budget + 1)
    if len(data) > budget:
        raise _Reject("the bundle grew while it was read: try again")
    return data


def _read_zip(source: Path | io.BytesIO, limits: _Limits) -> Bundle:
    try:
        archive = zipfile.ZipFile(source)
    except _ZIP_ERRORS as err:
        raise DeployRejected(
            [Problem(_ROOT, f"not a readable .zip archive ({err}): upload a zip file")]
        ) from err
    with archive:
        contents, problems = _read_zip_entries(archive, limits)
    return _finish(contents, problems, limits)


def _read_zip_entries(archive: zipfile.ZipFile, limits: _Limits) -> tuple[dict[str, bytes], list[Problem]]:
    infos = archive.infolist()
    problems: list[Problem] = []
    contents: dict[str, bytes] = {}
    try:
        _check_count(sum(1 for info in infos if not info.filename.endswith("/")), limits)
        _check_total(sum(info.file_size for info in infos), limits)
        strip = _common_folder(infos)
        seen: set[str] = set()
        accepted: list[tuple[str, zipfile.ZipInfo]] = []
        for info in infos:
            name = info.filename
            where = f"zip entry {name!r}"
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                problems.append(
                    Problem(_ROOT, f"{where} is a symbolic link: replace it with the file itself")
                )
                continue
            if issue := _path_issue(name.removesuffix("/") if info.filename.endswith("/") else name):
                problems.append(Problem(_ROOT, f"{where}: {issue}"))
                continue
            if info.filename.endswith("/"):
                continue
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
                problems.append(Problem(_ROOT, f"{where} is not a regular file: remove it"))
                continue
            if info.flag_bits & 0x1:
                problems.append(Problem(_ROOT, f"{where} is encrypted: zip the bundle without a password"))
                continue
            if name in seen:
                problems.append(Problem(_ROOT, f"{where} appears twice in the archive: keep one"))
                continue
            seen.add(name)
            if not name.startswith(strip):
                continue  # only __MACOSX/ entries lie outside the common folder
            rel = name[len(strip) :]
            if not _skipped(rel):
                accepted.append((rel, info))
        total = 0
        for rel, info in accepted:
            if rel == MANIFEST_NAME:
                _check_manifest_size(info.file_size, limits)
            data = _inflate(archive, info)
            total += len(data)
            _check_total(total, limits)
            contents[rel] = data
    except _Reject as stop:
        problems.append(stop.problem)
    return contents, problems


def _common_folder(infos: list[zipfile.ZipInfo]) -> str:
    """``"folder/"`` when every entry sits in that one folder and it holds app.json, else ``""``."""
    names = [info.filename for info in infos if not info.filename.startswith("__MACOSX/")]
    if not names or MANIFEST_NAME in names:
        return ""
    top = names[0].split("/", 1)[0] + "/"
    if top == "/" or not all(name.startswith(top) for name in names):
        return ""
    return top if top + MANIFEST_NAME in names else ""


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """Read one entry, never inflating more than its declared size (already within the budget)."""
    limit = info.file_size
    chunks: list[bytes] = []
    read = 0
    try:
        with archive.open(info) as handle:
            while chunk := handle.read(min(_CHUNK, limit - read + 1)):
                read += len(chunk)
                if read > limit:
                    raise _Reject(
                        f"zip entry {info.filename!r} inflates beyond its declared size: rebuild the zip"
                    )
                chunks.append(chunk)
    except _ZIP_ERRORS as err:
        raise _Reject(f"zip entry {info.filename!r} cannot be read ({err}): rebuild the zip") from err
    if read != info.file_size:
        raise _Reject(f"zip entry {info.filename!r} is shorter than its declared size: rebuild the zip")
    return b"".join(chunks)


def _finish(contents: dict[str, bytes], problems: list[Problem], limits: _Limits) -> Bundle:
    if problems:
        raise DeployRejected(problems)
    raw = contents.get(MANIFEST_NAME)
    if raw is None:
        raise DeployRejected(
            [Problem(_ROOT, f"the bundle has no {MANIFEST_NAME} at its root: add the manifest")]
        )
    try:
        _check_manifest_size(len(raw), limits)
    except _Reject as stop:
        raise DeployRejected([stop.problem]) from None
    manifest = _parse_manifest(raw)
    return Bundle(manifest=manifest, files=dict(sorted(contents.items())))


class _DuplicateKeys(dict):
    """A JSON object in which some key appeared more than once."""

    duplicates: list[str]


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict:
    result: dict = {}
    duplicates: list[str] = []
    for key, value in pairs:
        if key in result:
            duplicates.append(key)
        result[key] = value
    if duplicates:
        marked = _DuplicateKeys(result)
        marked.duplicates = duplicates
        return marked
    return result


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _parse_manifest(raw: bytes) -> dict:
    """Decode and parse app.json, or raise DeployRejected saying exactly where it is broken."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DeployRejected(
            [
                Problem(
                    _ROOT, f"{MANIFEST_NAME} is not UTF-8 (bad byte at offset {err.start}): save it as UTF-8"
                )
            ]
        ) from None
    try:
        manifest = json.loads(text, object_pairs_hook=_object_pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise DeployRejected(
            [
                Problem(
                    _ROOT,
                    f"{MANIFEST_NAME} is not valid JSON: {err.msg} at line {err.lineno} column {err.colno}",
                )
            ]
        ) from None
    except RecursionError:
        raise DeployRejected([Problem(_ROOT, nested_too_deep(MANIFEST_NAME))]) from None
    except ValueError as err:
        raise DeployRejected([Problem(_ROOT, f"{MANIFEST_NAME} is not valid JSON: {err}")]) from None
    if not isinstance(manifest, dict):
        raise DeployRejected(
            [Problem(_ROOT, f"{MANIFEST_NAME} must hold a JSON object ({{...}}), not {_json_kind(manifest)}")]
        )
    problems = list(_structure_problems(manifest, _ROOT, 1))
    if problems:
        raise DeployRejected(problems)
    return _plain(manifest)


def nested_too_deep(what: str) -> str:
    """The problem of JSON nested too deep for the parser (past ~1,000 levels), which never reads it."""
    return f"{what} is nested too deep to read (a manifest may nest {MAX_JSON_DEPTH} levels): flatten it"


def _structure_problems(value: Any, ptr: str, depth: int) -> Iterable[Problem]:
    if depth > MAX_JSON_DEPTH:
        yield Problem(ptr, f"nested more than {MAX_JSON_DEPTH} levels deep: flatten it")
        return
    if isinstance(value, _DuplicateKeys):
        for key in dict.fromkeys(value.duplicates):
            yield Problem(child(ptr, key), f"key {key!r} appears more than once in this object: keep one")
    if isinstance(value, dict):
        for key, item in value.items():
            issue = _text_issue(key)
            if issue is not None:
                yield Problem(ptr, f"a key {issue}")
            yield from _structure_problems(item, child(ptr, key), depth + 1)
    elif isinstance(value, str):
        issue = _text_issue(value)
        if issue is not None:
            yield Problem(ptr, f"the text {issue}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _structure_problems(item, child(ptr, index), depth + 1)


def _text_issue(text: str) -> str | None:
    """Why ``text`` cannot be stored (PostgreSQL's jsonb holds neither), or None."""
    if "\x00" in text:
        return "holds a NUL character (\\u0000), which cannot be stored: remove it"
    if not is_text(text):
        return "holds a lone surrogate (an unpaired \\ud800-\\udfff escape): remove it"
    return None


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"
