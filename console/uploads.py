"""Bundle uploads from the deploy form: a .zip, or a folder's files with their relative paths.

A browser sends a folder chosen with ``<input type=file webkitdirectory>`` as one file part per
file, the part's filename being the path relative to the chosen folder's parent
(``case_portal/server/search.py``). Django keeps only the last segment of a filename, which would
flatten the folder, so deploy views install ``BundleUploadHandler``: it parses the request itself,
keeping each path, and holds the files in memory up to a cap (bundles are small; the cap stops a
huge upload before it fills memory or disk). The paths are then checked by the same bundle reader
the API and the ``deploy`` command use, by packing the files into a zip for it.
"""

from __future__ import annotations

import html
import io
import zipfile

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFilesSent
from django.core.files.uploadedfile import InMemoryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest
from django.http.multipartparser import MultiPartParser

from apps_runtime.manifest import (
    Bundle,
    BundleTooLarge,
    DeployRejected,
    Problem,
    read_bundle_bytes,
    read_bundle_upload,
)
from apps_runtime.manifest.bundle import MAX_FILES, MAX_TOTAL_BYTES

# The bundle reader's own limits decide; this only bounds what is held before it can (a zip may be a
# little larger than its contents).
MAX_UPLOAD_BYTES = MAX_TOTAL_BYTES + MAX_FILES * 1024 + 64 * 1024


class _PathKeepingParser(MultiPartParser):
    """Django's multipart parser, keeping a file part's relative path (checked later, not trusted)."""

    def sanitize_file_name(self, file_name: str) -> str | None:
        file_name = "".join(char for char in html.unescape(file_name) if char.isprintable())
        return file_name or None


class _CappedMemoryHandler(FileUploadHandler):
    """Holds every uploaded file in memory, with its relative path, until the total passes the cap."""

    def __init__(self, cap: int, request: HttpRequest | None = None):
        super().__init__(request)
        self.cap = cap
        self.total = 0
        self.too_large = False

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self.buffer = io.BytesIO()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        self.total += len(raw_data)
        if self.total > self.cap:
            self.too_large = True
            raise StopUpload(connection_reset=False)
        self.buffer.write(raw_data)

    def file_complete(self, file_size: int) -> InMemoryUploadedFile:
        self.buffer.seek(0)
        uploaded = InMemoryUploadedFile(
            file=self.buffer,
            field_name=self.field_name,
            name=self.file_name,
            content_type=self.content_type,
            size=file_size,
            charset=self.charset,
            content_type_extra=self.content_type_extra,
        )
        uploaded.relative_path = self.file_name  # .name keeps only the last segment
        return uploaded


class BundleUploadHandler(FileUploadHandler):
    """Parses a multipart request with ``_PathKeepingParser`` into capped in-memory files.

    Install it before anything reads ``request.POST`` (so the view must be ``csrf_exempt`` and
    check CSRF itself afterwards, as Django's upload-handler documentation shows).
    """

    def __init__(self, request: HttpRequest | None, cap: int):
        super().__init__(request)
        self.files = _CappedMemoryHandler(cap, request)

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        return _PathKeepingParser(META, input_data, [self.files], encoding).parse()

    @property
    def too_large(self) -> bool:
        return self.files.too_large

    @property
    def cap(self) -> int:
        return self.files.cap

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:  # never called: parsed above
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


def install(request: HttpRequest) -> BundleUploadHandler:
    """Make ``request`` parse its uploads with ``BundleUploadHandler``; call before reading POST."""
    handler = BundleUploadHandler(request, MAX_UPLOAD_BYTES)
    request.upload_handlers = [handler]
    return handler


def parse(request: HttpRequest) -> None:
    """Parse the request's upload now, so a folder of too many files is a problem, not a 400 page.

    Raises:
        DeployRejected: more files than Django takes in one request (DATA_UPLOAD_MAX_NUMBER_FILES).
        BundleTooLarge: form fields (not files) over DATA_UPLOAD_MAX_MEMORY_SIZE.
    """
    try:
        request.FILES  # noqa: B018 - parsing is the point
    except RequestDataTooBig as err:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raise BundleTooLarge([Problem("/", f"the form's fields are over {limit} bytes")]) from err
    except TooManyFilesSent as err:
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        raise DeployRejected(
            [Problem("/", f"more than {limit} files: zip the folder and upload the .zip")]
        ) from err


def uploaded(request: HttpRequest, handler: BundleUploadHandler) -> tuple[object | None, list]:
    """The uploaded .zip (field ``bundle``) and folder files (field ``files``) of a deploy request.

    Raises:
        BundleTooLarge: the upload passed the cap (the handler dropped it instead of reading it all).
    """
    files = request.FILES  # already parsed (see parse)
    if handler.too_large:
        message = f"the upload is over {handler.cap} bytes: make the bundle smaller"
        raise BundleTooLarge([Problem("/", message)])
    return files.get("bundle"), files.getlist("files")


def bundle_from_zip(upload) -> Bundle:
    """The bundle in an uploaded .zip.

    Raises:
        DeployRejected: not a zip, or the bundle reader refuses what is in it.
    """
    return read_bundle_upload(upload)


def bundle_from_folder(uploads: list) -> Bundle:
    """The bundle in a folder's uploaded files (each with its ``relative_path``).

    The files are packed into a zip under their paths, so the bundle reader checks every path and
    limit exactly as for a zip upload, and reads the bundle out of the one top-level folder.

    Raises:
        DeployRejected: a path is hostile, a limit is exceeded, or app.json is missing or invalid.
    """
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", compression=zipfile.ZIP_STORED) as archive:
        for upload in uploads:
            path = getattr(upload, "relative_path", upload.name)
            archive.writestr(zipfile.ZipInfo(path), upload.read())
    return read_bundle_bytes(packed.getvalue())
