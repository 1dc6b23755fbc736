"""The tool options ``keywords`` and ``pinned`` (search_tools and toolDiscovery), with their bounds."""

import pytest

from apps_runtime.manifest import validate_manifest
from apps_runtime.manifest.schema import TOOL_KEYWORD_MAX_CHARS, TOOL_KEYWORDS_MAX
from tests.apps_runtime.manifest.builders import FILES, edited, pointers_of

TOOL = "/mcp/tools/0"


def test_keywords_and_pinned_deploy():
    manifest = edited([(f"{TOOL}/keywords", ["client file", "dossier"]), (f"{TOOL}/pinned", True)])
    assert validate_manifest(manifest, FILES) == []


@pytest.mark.parametrize(
    ("edits", "pointer"),
    [
        ([(f"{TOOL}/keywords", ["x"] * (TOOL_KEYWORDS_MAX + 1))], f"{TOOL}/keywords"),
        ([(f"{TOOL}/keywords", ["y" * (TOOL_KEYWORD_MAX_CHARS + 1)])], f"{TOOL}/keywords/0"),
        ([(f"{TOOL}/keywords", [""])], f"{TOOL}/keywords/0"),
        ([(f"{TOOL}/keywords", "dossier")], f"{TOOL}/keywords"),
        ([(f"{TOOL}/pinned", "yes")], f"{TOOL}/pinned"),
    ],
)
def test_bad_search_options_are_refused_at_their_pointer(edits, pointer):
    assert pointer in pointers_of(edited(edits))
