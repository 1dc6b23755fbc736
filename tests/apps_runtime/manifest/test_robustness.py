"""Garbage in gives DeployRejected out, never another exception (seeded, so failures reproduce)."""

import copy
import io
import json
import random
import zipfile

from apps_runtime.manifest import DeployRejected, read_bundle_bytes, validate_manifest
from tests.apps_runtime.manifest.builders import FILES, valid_manifest

ODD_VALUES = [
    None,
    True,
    0,
    -1,
    1.5,
    10**30,
    "",
    "GET /a",
    "role:",
    "internal",
    "0 3 * * *",
    "../x.py",
    [],
    [1, "x"],
    {},
    {"type": "object"},
    {"type": []},
    {"$schema": 5},
    {"$schema": {}},
    {"required": {}},
    {"properties": []},
    {"$ref": 5},
]
ODD_KEYS = ["$ref", "not", "type", "GET /z", "{a}", "", "properties", "required"]


def _locations(node, path=()):
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _locations(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _locations(value, (*path, index))


def _mutated(rng: random.Random) -> object:
    manifest: object = valid_manifest()
    for _ in range(rng.randint(1, 4)):
        path = rng.choice(list(_locations(manifest)))
        value = copy.deepcopy(rng.choice(ODD_VALUES))
        if not path:
            manifest = value
            continue
        target = manifest
        for token in path[:-1]:
            target = target[token]
        if isinstance(target[path[-1]], dict) and rng.random() < 0.3:
            target[path[-1]][rng.choice(ODD_KEYS)] = value
        else:
            target[path[-1]] = value
    return manifest


def test_the_validator_answers_any_mutated_manifest_with_problems_or_warnings():
    rng = random.Random(20250101)
    for _ in range(600):
        manifest = _mutated(rng)
        try:
            validate_manifest(manifest, FILES)
        except DeployRejected as rejected:
            assert all(problem.pointer.startswith("/") and problem.message for problem in rejected.problems)


def test_the_zip_reader_answers_any_corrupted_archive_with_a_bundle_or_problems():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("app.json", json.dumps({"name": "a", "routes": {}}))
        archive.writestr("server/x.py", b"def handle(request):\n    return 1\n" * 20)
        archive.writestr("data/y.txt", b"hello" * 50)
    original = buffer.getvalue()
    rng = random.Random(20250102)
    for _ in range(1500):
        data = bytearray(original)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            read_bundle_bytes(bytes(data))
        except DeployRejected as rejected:
            assert all(problem.pointer == "/" for problem in rejected.problems)
