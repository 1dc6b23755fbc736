"""Console test helpers: signed-in clients, bundles as zips and as folder uploads."""

from __future__ import annotations

import io
import json
import uuid
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.support.apps import HANDLERS, cases_manifest


@pytest.fixture
def signed_in(acme):
    """A test client signed in as ``username`` (CSRF enforced when asked, as a browser meets it)."""

    def sign_in(username: str, *, csrf: bool = False) -> Client:
        client = Client(enforce_csrf_checks=csrf)
        client.force_login(get_user_model().objects.get(username=username))
        return client

    return sign_in


def bundle_files(manifest: dict | None = None, files: dict | None = None) -> dict[str, bytes]:
    """A bundle's files by relative path, app.json included."""
    found = {path: text.encode() for path, text in (files or HANDLERS).items()}
    found["app.json"] = json.dumps(manifest or cases_manifest()).encode()
    return found


def zip_of(files: dict[str, bytes], folder: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in files.items():
            archive.writestr(folder + path, data)
    return buffer.getvalue()


def multipart(fields: dict[str, str], files: list[tuple[str, str, bytes]]) -> tuple[bytes, str]:
    """A multipart body as a browser sends it, file names kept as given (the test client keeps only
    the last path segment, so a folder upload is built by hand)."""
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        )
    for field, filename, data in files:
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{filename}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        )
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
