"""The examples of the README and of the manual (``docs/``), run as written against a served demo:
the check that they keep working.

A fenced block right after ``<!-- readme-test -->``, in ``README.md`` or any page under ``docs/``,
runs in bash against the demo tenant that ``seed_demo`` builds (as ``make demo`` does), served by
``manage.py serve`` on a free port, from a scratch folder that looks like the checkout
(``manage.py`` and ``examples/``). Only what cannot be the same on a test machine is changed:
``http://127.0.0.1:8000`` becomes the served port, ``.venv/bin/python`` the interpreter running the
tests, ``TOKEN``/``ADMIN_TOKEN`` are the reader's and the admin's tokens (as the README asks),
``curl`` fails on an HTTP error status, and the demo's ``openai`` agent provider is a scripted
chat-completions server on loopback (``AGENT_PROVIDERS``): the real one cannot be reached from a
test machine.

``<!-- readme-test: exits 1 -->`` expects that exit status instead of 0, and a ```text block right
after a block holds lines its output must contain (``...`` stands for lines left out).
``<!-- readme-test: needs npm -->`` runs where npm is installed (CI has it).
``<!-- readme-test: manifest -->`` marks the manifest example: it must deploy, with its handlers
stubbed, without a problem or a warning. ``<!-- readme-test: case portal -->`` marks the demo case
portal's resources and prompts, which must be those of ``fixtures/apps/case_portal``;
``<!-- readme-test: case card -->`` and ``case card view`` its screen and lines of its view.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import bundle_from_mapping
from tests.support.chat_completions import answer_turn, scripted_provider, tool_call_turn
from tests.support.platform_process import PlatformProcess, migrated_database

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The manual's pages and the README: an example moved from one to another stays tested. The README
# comes last: its first app adds a tool to the demo, and the manual's client example counts them.
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), README]
DEMO_ORIGIN = "http://127.0.0.1:8000"
BLOCK_SECONDS = 300
_MARKED = re.compile(
    r"<!-- readme-test(?::\s*(?P<mode>[^>]*?))?\s*-->\n```(?P<lang>\w+)\n(?P<code>.*?)\n```\n"
    r"(?:\n```text\n(?P<expected>.*?)\n```\n)?",
    re.S,
)
# curl as the README writes it, but a 4xx/5xx fails the block; the newline keeps outputs apart.
_PRELUDE = 'curl() { command curl --silent --show-error --fail-with-body "$@"; echo; }\n'


@dataclass(frozen=True)
class Example:
    page: str  # the file, relative to the checkout
    section: str
    lang: str
    mode: str
    code: str
    expected: list[str]

    @property
    def exit_status(self) -> int:
        found = re.fullmatch(r"exits (\d+)", self.mode)
        return int(found.group(1)) if found else 0


def examples(lang: str) -> list[Example]:
    found = []
    for path in PAGES:
        found += _marked(path)
    return [example for example in found if example.lang == lang]


def _marked(path: Path) -> list[Example]:
    """The marked examples of one page, each named by its page and the ``##`` section it is in."""
    text = path.read_text()
    title = re.match(r"# (.+)\n", text)
    found = []
    for match in _MARKED.finditer(text):
        headings = re.findall(r"^## (.+)$", text[: match.start()], re.M)
        found.append(
            Example(
                page=str(path.relative_to(ROOT)),
                section=headings[-1] if headings else (title[1] if title else "top"),
                lang=match["lang"],
                mode=(match["mode"] or "").strip(),
                code=match["code"],
                expected=[line for line in (match["expected"] or "").splitlines() if line.strip()],
            )
        )
    return found


SHELL_EXAMPLES = examples("bash")


def _id(example: Example) -> str:
    return f"{example.page}, {example.section}: {example.code.splitlines()[0][:60]}"


def test_the_readme_marks_its_runnable_examples():
    sections = {(example.page, example.section) for example in SHELL_EXAMPLES}
    assert {("README.md", "The demo"), ("README.md", "Your first app")} <= sections
    pages = {example.page for example in SHELL_EXAMPLES}
    assert {"docs/clients.md", "docs/agents.md", "docs/mcp.md", "docs/production.md"} <= pages
    assert ("README.md", "Build from your laptop: lcp") in sections
    assert sorted(example.mode for example in examples("json")) == ["case card", "case portal", "manifest"]


# A relative link of the README: a file of the checkout, perhaps with an anchor in it. (The manual's
# own links are checked by `mkdocs build --strict`, which `make lint` runs; the README is not in it.)
_RELATIVE_LINK = re.compile(r"\]\((?![a-z]+:)(?P<path>[^)#\s]*)(?:#(?P<anchor>[^)\s]+))?\)")


def _slug(heading: str) -> str:
    """A heading's anchor, as MkDocs (Python-Markdown's toc) and GitHub make it for these headings."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)  # no "# comment" in code
    return {_slug(heading) for heading in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_the_readme_links_resolve():
    broken = []
    for link in _RELATIVE_LINK.finditer(README.read_text()):
        target = ROOT / link["path"] if link["path"] else README
        if not target.exists():
            broken.append(link[0])
        elif link["anchor"] and link["anchor"] not in _anchors(target):
            broken.append(link[0])
    assert broken == []


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo as ``make demo`` builds it, served, and a scratch folder that looks like the checkout."""
    workdir = tmp_path_factory.mktemp("readme-demo")
    database = migrated_database(workdir)
    checkout = workdir / "checkout"
    checkout.mkdir()
    for name in ("manage.py", "examples"):
        (checkout / name).symlink_to(ROOT / name)
    with scripted_provider(
        tool_call_turn(("acme_case_portal_find_case", {"query": "Ada Lovelace"})),
        answer_turn(lambda results: "From the case portal: " + results[-1][:500]),
    ) as provider:
        agent_providers = {"openai": {"kind": "openai", "base_url": provider.base_url}}
        platform = PlatformProcess(
            workdir, database.url, env={"AGENT_PROVIDERS": json.dumps(agent_providers)}
        )
        try:
            seeded = platform.manage("seed_demo", "--base-url", platform.base_url).stdout
            rows = [line.split() for line in seeded.splitlines()]
            tokens = {row[0]: row[-1] for row in rows if row and row[-1].startswith("lcp_")}
            platform.start()
            yield platform, checkout, tokens
        finally:
            platform.stop()
            database.drop()


@pytest.mark.slow
@pytest.mark.parametrize("example", SHELL_EXAMPLES, ids=_id)
def test_each_readme_shell_example_runs_as_written(demo, example):
    platform, checkout, tokens = demo
    if example.mode == "needs npm" and shutil.which("npm") is None:
        pytest.skip("npm is not installed here (CI installs it)")
    code = example.code.replace(DEMO_ORIGIN, platform.base_url)
    code = code.replace(".venv/bin/python", shlex.quote(sys.executable))
    # `lcp` is this checkout's command, its login kept in the scratch folder.
    code = f'lcp() {{ {shlex.quote(sys.executable)} -m lcp "$@"; }}\n' + code
    strict = "" if example.exit_status else "set -euo pipefail\n"
    env = {
        **platform.env,
        "TOKEN": tokens["reader"],
        "ADMIN_TOKEN": tokens["admin"],
        "MCP_URL": f"{platform.base_url}/t/acme/mcp",  # the example client's stand-in for --url
        "PYTHONPATH": str(ROOT),
        "LCP_CONFIG_DIR": str(checkout / ".lcp"),
    }
    done = subprocess.run(
        ["bash", "-c", strict + _PRELUDE + code],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_SECONDS,
    )
    output = done.stdout + done.stderr
    assert done.returncode == example.exit_status, output
    for line in example.expected:
        if line != "...":
            line = line.replace(DEMO_ORIGIN, platform.base_url)
            assert line in output, f"{line!r} is not in the output:\n{output}"


@pytest.mark.django_db
def test_the_readme_manifest_example_deploys_without_a_warning(make_tenant):
    [example] = [example for example in examples("json") if example.mode == "manifest"]
    manifest = json.loads(example.code)
    stub = "def handle(request):\n    return {}\n"
    handlers = {spec["handler"]: stub for spec in manifest["routes"].values()}
    result = deploy_bundle(make_tenant(), bundle_from_mapping(manifest, handlers), acting_user=None)
    assert result.warnings == []


def test_the_readme_resources_and_prompts_are_the_demo_case_portals():
    [example] = [example for example in examples("json") if example.mode == "case portal"]
    manifest = json.loads((ROOT / "fixtures" / "apps" / "case_portal" / "app.json").read_text())
    assert json.loads(example.code) == {key: manifest["mcp"][key] for key in ("resources", "prompts")}


def test_the_readme_case_card_is_the_demo_case_portals():
    [example] = [example for example in examples("json") if example.mode == "case card"]
    shown = json.loads(example.code)
    portal = ROOT / "fixtures" / "apps" / "case_portal"
    manifest = json.loads((portal / "app.json").read_text())
    assert shown["screens"] == manifest["screens"]
    [get_case] = [tool for tool in manifest["mcp"]["tools"] if tool["name"] == "get_case"]
    assert shown["get_case"]["ui"] == get_case["ui"]
    # The view's lines quoted are the demo's own (tests/mcp_gateway/test_mcp_apps_browser.py runs them).
    [view] = [example for example in examples("js") if example.mode == "case card view"]
    source = (portal / "screens" / "case_card.js").read_text().splitlines()
    assert all(line in source for line in view.code.splitlines())


def _example_client(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "mcp_client.py"), *args],
        env={**(env or {}), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_the_example_client_says_what_is_wrong_in_one_line(demo):
    platform, _, tokens = demo
    url = f"{platform.base_url}/t/acme/mcp"
    refused = _example_client("--url", url, "--token", "lcp_not_a_token")
    assert (refused.returncode, refused.stderr.count("\n")) == (1, 1)
    assert refused.stderr.startswith(f"error: {url} refused") and "check the token" in refused.stderr
    call = ("--call", "acme_case_portal_get_case", "--arguments", '{"case_id": "nope"}')
    failing = _example_client("--url", url, "--token", tokens["reader"], *call)
    assert failing.returncode == 1 and "case not found" in failing.stdout
