"""The deploy validator on ``screens`` and the tools' ``ui``: every problem at its pointer."""

import pytest

from apps_runtime.manifest import validate_manifest
from apps_runtime.manifest.screens import HTML_MAX_BYTES, RENDERED_MAX_BYTES
from tests.apps_runtime.manifest.builders import problems_of, valid_manifest

HTML = (
    b'<!doctype html><link rel="stylesheet" href="card.css"><img src="../img/a.png">'
    b'<script src="card.js"></script>'
)
FILES = {
    "app.json": b"{}",
    "server/search.py": b"",
    "server/get.py": b"",
    "server/jobs/reindex.py": b"",
    "screens/card.html": HTML,
    "screens/card.css": b"h1{}",
    "screens/card.js": b"1;",
    "img/a.png": b"\x89PNG",
}


def with_screen(screen: dict | None = None, files: dict | None = None, **tool_ui) -> tuple[dict, dict]:
    manifest = valid_manifest()
    manifest["screens"] = {"card": {"file": "screens/card.html", **(screen or {})}}
    manifest["mcp"]["tools"][1]["ui"] = {"screen": "card", **tool_ui}
    return manifest, {**FILES, **(files or {})}


def problems(manifest: dict, files: dict) -> list[tuple[str, str]]:
    return [(p.pointer, p.message) for p in problems_of(manifest, files)]


def test_a_screen_with_its_files_and_tools_of_every_visibility_is_accepted():
    manifest, files = with_screen(
        {"title": "Card", "csp": {"connectDomains": ["https://api.example.com", "https://*.example.org"]}},
        visibility=["app"],
        requiresUiHost=True,
    )
    assert validate_manifest(manifest, files) == []


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (b'<script src="../../etc/passwd"></script>', "use a path relative to the screen, inside the bundle"),
        (b'<script src="/abs.js"></script>', "use a path relative to the screen, inside the bundle"),
        (b'<link rel="stylesheet" href="gone.css">', "'screens/gone.css' is not in the bundle"),
        (b'<script src="../server/get.py"></script>', "the app's code and manifest are never served"),
        (b'<img src="javascript:alert(1)">', "use a path relative to the screen, inside the bundle"),
        (
            b'<script src="https://cdn.example.net/x.js"></script>',
            "add 'https://cdn.example.net' to csp.resourceDomains",
        ),
    ],
)
def test_references_must_stay_in_the_bundle_or_on_a_declared_domain(html, expected):
    manifest, files = with_screen(files={"screens/card.html": html})
    ((pointer, message),) = problems(manifest, files)
    assert pointer == "/screens/card/file"
    assert expected in message


def test_a_remote_file_on_a_declared_domain_is_accepted():
    html = b'<script src="https://cdn.example.net/x.js"></script><img src="data:image/png;base64,AA==">'
    manifest, files = with_screen(
        {"csp": {"resourceDomains": ["https://cdn.example.net"]}}, files={"screens/card.html": html}
    )
    assert validate_manifest(manifest, files) == []


def test_missing_large_and_non_utf8_files_are_refused():
    manifest, files = with_screen({"file": "screens/gone.html"})
    assert problems(manifest, files) == [
        ("/screens/card/file", "file 'screens/gone.html' is not in the bundle: add it or fix the path")
    ]
    manifest, files = with_screen(files={"screens/card.html": b"<p>" * HTML_MAX_BYTES})
    assert "over 262,144" in problems(manifest, files)[0][1]
    manifest, files = with_screen(files={"screens/card.html": b"\xff\xfe<p>"})
    assert problems(manifest, files) == [
        ("/screens/card/file", "file 'screens/card.html' is not UTF-8 text: save it as UTF-8")
    ]


def test_a_screen_whose_files_add_up_past_the_cap_is_refused():
    manifest, files = with_screen(files={"screens/card.js": b"1;" * (RENDERED_MAX_BYTES // 2)})
    ((pointer, message),) = problems(manifest, files)
    assert pointer == "/screens/card/file" and "with the files it loads is" in message


def test_csp_origins_must_be_origins():
    manifest, files = with_screen(
        {
            "csp": {
                "connectDomains": [
                    "https://ok.example.com",
                    "https://x.com/path",
                    "http://evil.com",
                    "'none'",
                ]
            }
        }
    )
    assert [pointer for pointer, _ in problems(manifest, files)] == [
        "/screens/card/csp/connectDomains/1",
        "/screens/card/csp/connectDomains/2",
        "/screens/card/csp/connectDomains/3",
    ]


def test_a_tool_must_name_a_screen_of_its_app_and_a_known_visibility():
    manifest, files = with_screen(screen=None)
    manifest["mcp"]["tools"][1]["ui"] = {"screen": "nope", "visibility": ["user"]}
    found = dict(problems(manifest, files))
    assert found["/mcp/tools/1/ui/screen"] == "'nope' is not a screen of this app (screens: card)"
    assert "/mcp/tools/1/ui/visibility/0" in found


def test_routes_under_the_screens_path_are_refused():
    manifest, files = with_screen()
    manifest["routes"]["GET /_screens/{x}"] = {"handler": "server/get.py", "auth": "user"}
    assert (
        "/routes/GET ~1_screens~1{x}",
        "route 'GET /_screens/{x}' is under /_screens, where the app's "
        "screens are served: choose another path",
    ) in problems(manifest, files)


def test_screen_names_and_files_follow_the_schema():
    manifest, files = with_screen()
    manifest["screens"]["Bad Name"] = {"file": "screens/card.txt"}
    pointers = [pointer for pointer, _ in problems(manifest, files)]
    assert pointers == ["/screens/Bad Name", "/screens/Bad Name/file"]
