import io
import json
import os
import stat
import struct
import warnings
import zipfile

import pytest

from apps_runtime.manifest import DeployRejected, bundle_from_mapping, read_bundle, read_bundle_bytes

MANIFEST = {"name": "demo", "routes": {"GET /hello": {"handler": "server/hello.py", "auth": "user"}}}
HANDLER = b"def handle(request):\n    return {'hello': 'world'}\n"


def manifest_bytes(manifest=None) -> bytes:
    return json.dumps(MANIFEST if manifest is None else manifest).encode()


def make_folder(root, files: dict[str, bytes]):
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def make_zip(entries, *, compression=zipfile.ZIP_DEFLATED) -> bytes:
    """``entries``: (name or ZipInfo, bytes) pairs, written as they are (duplicates allowed)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Duplicate name"
        with zipfile.ZipFile(buffer, "w", compression) as archive:
            for name, data in entries:
                archive.writestr(name, data)
    return buffer.getvalue()


def symlink_entry(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3  # Unix
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def rejection(call, *args, **kwargs) -> list[str]:
    with pytest.raises(DeployRejected) as info:
        call(*args, **kwargs)
    return [str(problem) for problem in info.value.problems]


VALID_FILES = {"app.json": manifest_bytes(), "server/hello.py": HANDLER}


# Folders


def test_a_folder_is_read_with_app_json_among_its_files(tmp_path):
    bundle = read_bundle(make_folder(tmp_path, VALID_FILES))
    assert bundle.manifest == MANIFEST
    assert bundle.files == VALID_FILES


def test_a_folder_path_may_be_a_string(tmp_path):
    assert read_bundle(str(make_folder(tmp_path, VALID_FILES))).manifest == MANIFEST


def test_bytecode_caches_are_skipped_and_dotfiles_kept(tmp_path):
    extra = {
        "server/__pycache__/hello.cpython-311.pyc": b"\0",
        "server/stale.pyc": b"\0",
        ".git/config": b"[core]",
        ".hidden/settings.txt": b"x",
        "server/.keep": b"",
    }
    bundle = read_bundle(make_folder(tmp_path, {**VALID_FILES, **extra}))
    assert sorted(bundle.files) == [".hidden/settings.txt", "app.json", "server/.keep", "server/hello.py"]


def test_a_symlinked_file_in_a_folder_is_refused(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    root = make_folder(tmp_path / "bundle", VALID_FILES)
    os.symlink(outside, root / "server" / "link.py")
    assert rejection(read_bundle, root) == [
        "/: 'server/link.py' is a symbolic link: replace it with the file itself"
    ]


def test_a_symlinked_folder_in_a_folder_is_refused_and_not_followed(tmp_path):
    outside = make_folder(tmp_path / "outside", {"secret.py": b"x"})
    root = make_folder(tmp_path / "bundle", VALID_FILES)
    os.symlink(outside, root / "lib")
    assert rejection(read_bundle, root) == ["/: 'lib' is a symbolic link: replace it with the file itself"]


def test_a_fifo_in_a_folder_is_refused(tmp_path):
    root = make_folder(tmp_path, VALID_FILES)
    os.mkfifo(root / "pipe")
    assert rejection(read_bundle, root) == ["/: 'pipe' is not a regular file: remove it"]


def test_a_folder_with_too_many_files_is_refused(tmp_path):
    root = make_folder(tmp_path, {**VALID_FILES, **{f"data/{i}.txt": b"x" for i in range(5)}})
    assert rejection(read_bundle, root, max_files=4) == ["/: the bundle has more than 4 files: remove some"]


def test_a_folder_too_large_in_total_is_refused(tmp_path):
    root = make_folder(tmp_path, {**VALID_FILES, "data/big.bin": b"x" * 2000})
    assert rejection(read_bundle, root, max_total_bytes=1000) == [
        "/: the bundle is larger than 1000 bytes: make it smaller"
    ]


def test_a_folder_with_a_manifest_too_large_is_refused(tmp_path):
    root = make_folder(tmp_path, {**VALID_FILES, "app.json": manifest_bytes() + b" " * 600})
    assert rejection(read_bundle, root, max_manifest_bytes=512) == [
        "/: app.json is larger than 512 bytes: make it smaller"
    ]


def test_a_folder_without_app_json_is_refused(tmp_path):
    root = make_folder(tmp_path, {"server/hello.py": HANDLER, "sub/app.json": manifest_bytes()})
    assert rejection(read_bundle, root) == ["/: the bundle has no app.json at its root: add the manifest"]


def test_a_missing_path_is_refused(tmp_path):
    problems = rejection(read_bundle, tmp_path / "nope")
    assert len(problems) == 1 and "neither a bundle folder nor a .zip file" in problems[0]


# The manifest's own bytes (shared by every source)


@pytest.mark.parametrize(
    ("raw", "start", "end"),
    [
        (b"\xff\xfe{}", "/: app.json is not UTF-8 (bad byte at offset 0): save it as UTF-8", ""),
        (b'{"name": "a",\n "routes": {}\n', "/: app.json is not valid JSON: ", " at line 3 column 1"),
        (b'{"name": "a", "routes": {},}', "/: app.json is not valid JSON: ", " at line 1 column 28"),
        (b"", "/: app.json is not valid JSON: ", " at line 1 column 1"),
        (b"[1, 2]", "/: app.json must hold a JSON object ({...}), not an array", ""),
        (b'"app"', "/: app.json must hold a JSON object ({...}), not a string", ""),
        (b"null", "/: app.json must hold a JSON object ({...}), not null", ""),
        (
            b'{"name": "a", "routes": {}, "version": NaN}',
            "/: app.json is not valid JSON: NaN is not valid JSON",
            "",
        ),
    ],
)
def test_a_manifest_that_is_not_a_json_object_is_refused_saying_where(tmp_path, raw, start, end):
    root = make_folder(tmp_path, {**VALID_FILES, "app.json": raw})
    problems = rejection(read_bundle, root)
    assert len(problems) == 1
    assert problems[0].startswith(start)
    assert problems[0].endswith(end)


def test_a_byte_order_mark_is_accepted(tmp_path):
    root = make_folder(tmp_path, {**VALID_FILES, "app.json": b"\xef\xbb\xbf" + manifest_bytes()})
    assert read_bundle(root).manifest == MANIFEST


def test_keys_repeated_in_one_object_are_refused_at_their_pointer(tmp_path):
    raw = (
        b'{"name": "a", "routes": {"GET /x": {"handler": "x.py", "auth": "user"},'
        b' "GET /x": {"handler": "y.py", "auth": "public"}}, "name": "b"}'
    )
    root = make_folder(tmp_path, {**VALID_FILES, "app.json": raw})
    assert rejection(read_bundle, root) == [
        "/name: key 'name' appears more than once in this object: keep one",
        "/routes/GET ~1x: key 'GET /x' appears more than once in this object: keep one",
    ]


def test_a_nul_or_a_lone_surrogate_in_a_key_or_a_text_is_refused_at_its_pointer(tmp_path):
    # PostgreSQL's jsonb stores neither: the deploy failed with a DataError (found by the fuzz test).
    raw = b'{"name": "a", "routes": {}, "x": {"k\\u0000": 1, "t": "\\ud800"}}'
    root = make_folder(tmp_path, {**VALID_FILES, "app.json": raw})
    assert rejection(read_bundle, root) == [
        "/x: a key holds a NUL character (\\u0000), which cannot be stored: remove it",
        "/x/t: the text holds a lone surrogate (an unpaired \\ud800-\\udfff escape): remove it",
    ]


def test_a_manifest_nested_too_deeply_is_refused(tmp_path):
    raw = b'{"name": "a", "routes": {}, "description": ' + b"[" * 70 + b"]" * 70 + b"}"
    root = make_folder(tmp_path, {**VALID_FILES, "app.json": raw})
    problems = rejection(read_bundle, root)
    assert len(problems) == 1 and "nested more than 64 levels deep" in problems[0]


def test_a_manifest_nested_beyond_the_parser_is_refused_not_crashed(tmp_path):
    raw = b"[" * 100_000 + b"]" * 100_000
    root = make_folder(tmp_path, {**VALID_FILES, "app.json": raw})
    problems = rejection(read_bundle, root)
    assert problems == ["/: app.json is nested too deep to read (a manifest may nest 64 levels): flatten it"]


# Zip archives


def test_a_zip_reads_like_the_folder(tmp_path):
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(make_zip(VALID_FILES.items()))
    assert read_bundle(archive) == read_bundle_bytes(archive.read_bytes())
    assert read_bundle(archive).files == VALID_FILES


def test_a_zip_of_the_bundle_folder_itself_is_read_from_that_folder():
    data = make_zip([("demo/", b""), *((f"demo/{name}", content) for name, content in VALID_FILES.items())])
    assert read_bundle_bytes(data).files == VALID_FILES


def test_macos_metadata_and_bytecode_in_a_zip_are_skipped():
    entries = [
        *VALID_FILES.items(),
        ("__MACOSX/._app.json", b"\0"),
        ("server/__pycache__/hello.cpython-311.pyc", b"\0"),
    ]
    assert read_bundle_bytes(make_zip(entries)).files == VALID_FILES


@pytest.mark.parametrize(
    ("name", "issue"),
    [
        ("../evil.py", "the path contains '..' and would escape the bundle"),
        ("server/../../evil.py", "the path contains '..' and would escape the bundle"),
        ("/etc/passwd", "the path is absolute: paths must be relative to the bundle root"),
        ("C:/Windows/evil.py", "the path is absolute: paths must be relative to the bundle root"),
        ("server\\..\\evil.py", "the path contains a backslash: bundles use forward slashes only"),
        ("server/./evil.py", "the path has an empty or '.' segment: write it as a plain relative path"),
        ("server//evil.py", "the path has an empty or '.' segment: write it as a plain relative path"),
        ("evil\n.py", "the path contains control characters: rename the file"),
    ],
)
def test_zip_paths_that_could_escape_the_bundle_are_refused(name, issue):
    data = make_zip([*VALID_FILES.items(), (name, b"import os")])
    assert rejection(read_bundle_bytes, data) == [f"/: zip entry {name!r}: {issue}"]


def test_every_hostile_zip_entry_is_listed():
    data = make_zip(
        [*VALID_FILES.items(), ("../a.py", b""), ("/b.py", b""), symlink_entry("c.py", "/etc/passwd")]
    )
    assert len(rejection(read_bundle_bytes, data)) == 3


def test_a_symlink_in_a_zip_is_refused():
    data = make_zip([*VALID_FILES.items(), symlink_entry("server/passwd.py", "/etc/passwd")])
    assert rejection(read_bundle_bytes, data) == [
        "/: zip entry 'server/passwd.py' is a symbolic link: replace it with the file itself"
    ]


def test_a_special_file_in_a_zip_is_refused():
    info = zipfile.ZipInfo("server/device")
    info.create_system = 3
    info.external_attr = (stat.S_IFCHR | 0o644) << 16
    data = make_zip([*VALID_FILES.items(), (info, b"")])
    assert rejection(read_bundle_bytes, data) == [
        "/: zip entry 'server/device' is not a regular file: remove it"
    ]


def test_an_encrypted_zip_entry_is_refused():
    data = bytearray(make_zip([*VALID_FILES.items(), ("secret.py", b"x")], compression=zipfile.ZIP_STORED))
    # Set the "encrypted" flag of the last entry in the central directory.
    offset = data.rfind(b"PK\x01\x02")
    flags = struct.unpack_from("<H", data, offset + 8)[0]
    struct.pack_into("<H", data, offset + 8, flags | 0x1)
    assert rejection(read_bundle_bytes, bytes(data)) == [
        "/: zip entry 'secret.py' is encrypted: zip the bundle without a password"
    ]


def test_a_zip_entry_present_twice_is_refused():
    data = make_zip([*VALID_FILES.items(), ("server/hello.py", b"other")])
    assert rejection(read_bundle_bytes, data) == [
        "/: zip entry 'server/hello.py' appears twice in the archive: keep one"
    ]


def test_a_zip_with_too_many_files_is_refused():
    data = make_zip([*VALID_FILES.items(), *((f"d/{i}.txt", b"") for i in range(10))])
    assert rejection(read_bundle_bytes, data, max_files=5) == [
        "/: the bundle has more than 5 files: remove some"
    ]


def test_a_zip_bomb_is_refused_from_its_declared_sizes_before_inflating():
    data = make_zip([*VALID_FILES.items(), ("bomb.bin", b"\0" * (11 * 1024 * 1024))])
    assert len(data) < 100_000
    assert rejection(read_bundle_bytes, data) == [
        f"/: the bundle is larger than {10 * 1024 * 1024} bytes: make it smaller"
    ]


def test_a_zip_entry_lying_about_its_size_is_refused():
    data = bytearray(make_zip([*VALID_FILES.items(), ("big.bin", b"0" * 100_000)]))
    offset = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, offset + 24, 10)  # declared uncompressed size: 10 bytes
    problems = rejection(read_bundle_bytes, bytes(data))
    assert len(problems) == 1 and problems[0].startswith("/: zip entry 'big.bin' cannot be read")


def test_a_zip_manifest_too_large_is_refused():
    data = make_zip([*VALID_FILES.items()][1:] + [("app.json", manifest_bytes() + b" " * 2000)])
    assert rejection(read_bundle_bytes, data, max_manifest_bytes=1024) == [
        "/: app.json is larger than 1024 bytes: make it smaller"
    ]


def test_an_archive_far_larger_than_the_limit_is_refused_unopened(tmp_path):
    archive = tmp_path / "huge.zip"
    archive.write_bytes(b"\0" * 200_000)
    problems = rejection(read_bundle, archive, max_total_bytes=1000, max_files=10)
    assert len(problems) == 1 and "the archive is over" in problems[0]


def test_bytes_that_are_not_a_zip_are_refused():
    problems = rejection(read_bundle_bytes, b"this is not a zip")
    assert len(problems) == 1 and problems[0].startswith("/: not a readable .zip archive")


def test_a_zip_without_app_json_is_refused():
    data = make_zip([("server/hello.py", HANDLER)])
    assert rejection(read_bundle_bytes, data) == [
        "/: the bundle has no app.json at its root: add the manifest"
    ]


def test_a_zip_manifest_with_a_syntax_error_gives_line_and_column():
    data = make_zip([("app.json", b'{\n  "name": "a"\n  "routes": {}\n}'), ("server/hello.py", HANDLER)])
    (problem,) = rejection(read_bundle_bytes, data)
    assert problem.startswith("/: app.json is not valid JSON: ")
    assert problem.endswith(" at line 3 column 3")


def test_reading_a_hostile_zip_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    archive = tmp_path / "evil.zip"
    archive.write_bytes(make_zip([*VALID_FILES.items(), ("../evil.py", b"x"), symlink_entry("l", "/etc")]))
    with pytest.raises(DeployRejected):
        read_bundle(archive)
    assert sorted(p.name for p in tmp_path.parent.iterdir() if p.name == "evil.py") == []
    assert [p.name for p in tmp_path.iterdir()] == ["evil.zip"]


# A manifest and files posted as JSON


def test_a_mapping_becomes_a_bundle_with_the_manifest_stored_as_app_json():
    bundle = bundle_from_mapping(MANIFEST, {"server/hello.py": HANDLER.decode(), "data/blob.bin": b"\0\1"})
    assert bundle.manifest == MANIFEST
    assert sorted(bundle.files) == ["app.json", "data/blob.bin", "server/hello.py"]
    assert json.loads(bundle.files["app.json"]) == MANIFEST
    assert bundle.files["server/hello.py"] == HANDLER


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"../evil.py": ""}, "/: file '../evil.py': the path contains '..' and would escape the bundle"),
        (
            {"/abs.py": ""},
            "/: file '/abs.py': the path is absolute: paths must be relative to the bundle root",
        ),
        (
            {"a\\b.py": ""},
            "/: file 'a\\\\b.py': the path contains a backslash: bundles use forward slashes only",
        ),
        ({"app.json": "{}"}, "/: file 'app.json': send the manifest as 'manifest', not as a file"),
        ({"x.py": 5}, "/: file 'x.py': the content must be UTF-8 text or bytes"),
        ({"x.py": "\ud800"}, "/: file 'x.py': the content must be UTF-8 text or bytes"),
        ({7: ""}, "/: file 7: the path must be text"),
    ],
)
def test_hostile_or_malformed_mappings_are_refused(files, expected):
    assert rejection(bundle_from_mapping, MANIFEST, files) == [expected]


def test_a_mapping_manifest_must_be_an_object():
    assert rejection(bundle_from_mapping, ["x"], {}) == ["/: the manifest must be a JSON object, not list"]


def test_a_mapping_manifest_must_be_plain_json():
    problems = rejection(bundle_from_mapping, {**MANIFEST, "version": float("nan")}, {})
    assert len(problems) == 1 and problems[0].startswith("/: the manifest is not plain JSON data")


def test_mapping_limits_apply():
    files = {f"d/{i}.txt": "x" for i in range(3)}
    assert rejection(bundle_from_mapping, MANIFEST, files, max_files=2) == [
        "/: the bundle has more than 2 files: remove some"
    ]
    assert rejection(bundle_from_mapping, MANIFEST, {"big.bin": b"x" * 2000}, max_total_bytes=1000) == [
        "/: the bundle is larger than 1000 bytes: make it smaller"
    ]
    big = {**MANIFEST, "description": "d" * 2000}
    assert rejection(bundle_from_mapping, big, {}, max_manifest_bytes=1000) == [
        "/: app.json is larger than 1000 bytes: make it smaller"
    ]


def test_a_mapping_manifest_with_unencodable_text_is_refused():
    problems = rejection(bundle_from_mapping, {**MANIFEST, "title": "\ud800"}, {})
    assert len(problems) == 1 and problems[0].startswith("/: the manifest is not plain JSON data")


def test_a_mapping_reports_file_and_manifest_problems_together():
    deep = {**MANIFEST, "description": json.loads("[" * 70 + "]" * 70)}
    problems = rejection(bundle_from_mapping, deep, {"../x.py": ""})
    assert len(problems) == 2
    assert problems[0].startswith("/: file '../x.py'")
    assert "nested more than 64 levels deep" in problems[1]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_folder_is_refused(tmp_path):
    root = make_folder(tmp_path, VALID_FILES)
    (root / "server").chmod(0)
    try:
        problems = rejection(read_bundle, root)
    finally:
        (root / "server").chmod(0o755)
    assert len(problems) == 1 and "cannot be read" in problems[0]
