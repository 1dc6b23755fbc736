"""Manifests and bundles against the deploy path: a clean deploy, or DeployRejected with pointed problems.

Manifests start from the fixture bundles (``fixtures/apps``) and the test app and are mutated
anywhere, or are random JSON; zips carry odd entries. Whatever comes in, ``read_bundle_bytes`` /
``bundle_from_mapping`` and ``deploy_bundle`` either deploy it whole or raise ``DeployRejected`` whose
every problem reads ``<pointer>: <message>``; no other exception, no trace or host path in a message.
"""

from __future__ import annotations

import copy
import io
import json
import stat
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import DeployRejected, bundle_from_mapping, read_bundle, read_bundle_bytes
from apps_runtime.models import App, Tool
from tests.fuzz import strategies as fz
from tests.fuzz.profile import fuzz_settings
from tests.support.apps import HANDLERS, cases_manifest
from tests.support.leaks import leaks

FIXTURE_APPS = Path(__file__).resolve().parents[2] / "fixtures" / "apps"


def _seeds() -> list[tuple[dict, dict[str, bytes]]]:
    """(manifest, files) of every fixture bundle and of the test app."""
    seeds = []
    for folder in sorted(p for p in FIXTURE_APPS.iterdir() if (p / "app.json").exists()):
        bundle = read_bundle(folder)
        seeds.append((bundle.manifest, {k: v for k, v in bundle.files.items() if k != "app.json"}))
    seeds.append((cases_manifest(), {k: v.encode() for k, v in HANDLERS.items()}))
    return seeds


SEEDS = _seeds()

# Values that have broken validators before: hostile schemas and references, odd types, odd routes.
HOSTILE_VALUES = [
    {"$ref": "file:///nonexistent/secret.json"},
    {"$ref": "http://127.0.0.1:1/schema.json"},
    {"$ref": "#/definitions/nope"},
    {"$ref": "#"},
    {"$id": "http://127.0.0.1:1/x", "type": "object"},
    {"$schema": "http://127.0.0.1:1/meta"},
    {"$dynamicRef": "#meta"},
    {"type": "string", "pattern": "^(a+)+$"},
    {"type": "string", "pattern": "("},
    {"type": "object", "patternProperties": {"(((": {}}},
    {"type": "string", "pattern": "(" * 300 + ")" * 300},
    {"type": "string", "format": "regex"},
    {"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}},
    {"allOf": [{"type": "object"}] * 200},
    {"type": ["object", "null"]},
    {"type": "object", "required": ["a"] * 50},
    {"not": {}},
    "GET /x/{a}/{a}",
    "POST /../x",
    "role:" + "a," * 500,
    "internal",
    "public",
    "server/../../x.py",
    "/etc/passwd",
    "0 0 31 2 *",
    "* * * * * *",
    10**400,
    -0.0,
    "\u0000",
    "\ud800",
]
values = st.one_of(fz.json_values, st.sampled_from(HOSTILE_VALUES))


def _locations(node, path=()):
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _locations(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _locations(value, (*path, index))


@st.composite
def mutated_manifests(draw) -> tuple[object, dict[str, bytes]]:
    manifest, files = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    manifest = copy.deepcopy(manifest)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(list(_locations(manifest))))
        kind = draw(st.sampled_from(["replace", "delete", "insert"]))
        value = copy.deepcopy(draw(values))
        if not path:
            manifest = value if kind == "replace" else manifest
            continue
        parent = manifest
        for token in path[:-1]:
            parent = parent[token]
        if kind == "delete":
            del parent[path[-1]]
        elif kind == "insert" and isinstance(parent[path[-1]], dict):
            key = draw(
                st.sampled_from(["$ref", "$id", "pattern", "GET /z", "{a}", "", "~/", "x" * 100]) | st.text()
            )
            parent[path[-1]][key] = value
        elif kind == "insert" and isinstance(parent[path[-1]], list):
            parent[path[-1]].append(value)
        else:
            parent[path[-1]] = value
        if not isinstance(manifest, dict | list):
            break
    return manifest, files


def assert_deployed_whole_or_rejected_with_pointers(tenant, make_bundle, sent: str) -> None:
    """Build and deploy; a refusal must be DeployRejected with ``<pointer>: <message>`` problems only."""
    try:
        result = deploy_bundle(tenant, make_bundle(), acting_user=None)
    except DeployRejected as rejected:
        for problem in [*rejected.problems, *rejected.warnings]:
            assert isinstance(problem.pointer, str) and problem.pointer.startswith("/"), problem
            assert isinstance(problem.message, str) and problem.message.strip(), problem
            assert str(problem) == f"{problem.pointer}: {problem.message}"
            assert not leaks(problem.message, sent), problem
        return
    app = App.objects.for_tenant(tenant).get(pk=result.app.pk)
    assert app.active_version_id == result.version.pk
    live = list(
        Tool.objects.for_tenant(tenant).filter(app=app).order_by("position").values_list("name", "wire_name")
    )
    assert live == result.tools  # the new version with all its tools, nothing of the old one


@pytest.fixture
def tenant(make_tenant):
    return make_tenant("acme")


@pytest.mark.django_db
@fuzz_settings(max_examples=120)
@given(case=mutated_manifests())
def test_a_mutated_fixture_manifest_deploys_whole_or_is_rejected_with_pointers(tenant, case):
    manifest, files = case
    sent = json.dumps(manifest, default=str)
    assert_deployed_whole_or_rejected_with_pointers(
        tenant, lambda: bundle_from_mapping(manifest, files), sent
    )


@pytest.mark.django_db
@fuzz_settings(max_examples=60)
@given(
    manifest=fz.json_values | fz.json_objects,
    files=st.dictionaries(
        st.text(max_size=30), st.text(max_size=50) | st.binary(max_size=50) | fz.scalars, max_size=3
    ),
)
def test_random_json_and_files_are_rejected_with_pointers(tenant, manifest, files):
    sent = json.dumps(manifest, default=str) + json.dumps(list(files), default=str)
    assert_deployed_whole_or_rejected_with_pointers(
        tenant, lambda: bundle_from_mapping(manifest, files), sent
    )


ODD_ENTRY_NAMES = [
    "app.json",
    "server/x.py",
    "../app.json",
    "/app.json",
    "C:app.json",
    "server\\x.py",
    "server/\x00.py",
    "server/",
    "a/app.json",
    "__MACOSX/app.json",
    ".git/config",
    "server/__pycache__/x.pyc",
    "x" * 300,
    "é/ü.py",
    "./app.json",
    "server//x.py",
]


@st.composite
def odd_zips(draw) -> tuple[bytes, str]:
    """A zip archive with odd entries, and the text it carries (its names and manifest)."""
    manifest, files = draw(st.sampled_from(SEEDS))
    entries: list[tuple[str, bytes, int]] = []
    if draw(st.booleans()):
        entries.append(("app.json", json.dumps(manifest).encode(), 0))
        entries += [(name, content, 0) for name, content in files.items()]
    for _ in range(draw(st.integers(0, 5))):
        name = draw(st.sampled_from(ODD_ENTRY_NAMES) | st.text(min_size=1, max_size=40))
        content = draw(st.binary(max_size=200) | st.just(json.dumps(manifest).encode()) | fz.deeply_nested)
        mode = draw(st.sampled_from([0, stat.S_IFLNK | 0o777, stat.S_IFDIR | 0o755, stat.S_IFIFO | 0o644]))
        entries.append((name, content, mode))
    prefix = draw(st.sampled_from(["", "bundle/", "a/b/"]))
    buffer = io.BytesIO()
    method = draw(
        st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
    )
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, content, mode in entries:
            info = zipfile.ZipInfo(prefix + name)
            info.external_attr = mode << 16
            info.compress_type = method
            if draw(st.booleans()):
                info.flag_bits |= 0x1  # claims to be encrypted
            archive.writestr(info, content)
        archive.comment = draw(st.binary(max_size=30))
    data = buffer.getvalue()
    cut = draw(st.sampled_from([None, None, None, len(data) // 2, 30]))
    sent = json.dumps([[prefix + name for name, _, _ in entries], manifest])
    return (data if cut is None else data[:cut]), sent


@pytest.mark.django_db
@fuzz_settings(max_examples=80)
@given(archive=odd_zips())
def test_a_zip_with_odd_entries_deploys_whole_or_is_rejected_with_pointers(tenant, archive):
    data, sent = archive
    assert_deployed_whole_or_rejected_with_pointers(tenant, lambda: read_bundle_bytes(data), sent)


@pytest.fixture
def admin_api(tenant, make_member, make_token, api_client):
    make_member(tenant, "boss", admin=True)
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(tenant, 'boss')[1]}")
    return api_client


@pytest.mark.django_db
@fuzz_settings(max_examples=30)
@given(archive=odd_zips() | st.binary(max_size=200).map(lambda b: (b, "")), case=mutated_manifests())
def test_the_deploy_api_answers_any_bundle_with_201_or_pointed_problems(admin_api, archive, case):
    manifest, files = case
    data, sent_zip = archive
    upload = admin_api.post("/api/tenants/acme/apps", {"bundle": io.BytesIO(data)}, format="multipart")
    payload = {
        "manifest": manifest,
        "files": {name: content.decode(errors="replace") for name, content in files.items()},
    }
    # Encoded here: a hostile client sends lone surrogates as \\u escapes, which DRF's test renderer cannot.
    posted = admin_api.post("/api/tenants/acme/apps", json.dumps(payload), content_type="application/json")
    sent = json.dumps([manifest, list(files)], default=str) + sent_zip
    for response in (upload, posted):
        text = response.content.decode(errors="replace")
        assert response.status_code in (201, 400, 413, 422), (response.status_code, text[:500])
        assert not leaks(text, sent), text[:500]
        if response.status_code == 422:
            for problem in response.json()["problems"]:
                assert problem["pointer"].startswith("/") and problem["message"], problem
