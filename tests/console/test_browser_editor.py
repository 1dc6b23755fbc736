"""The editor (with its CodeMirror code editor), the playground and a live agent run page in a real
browser (Debian's chromium, Playwright) against ``manage.py serve``, with a scripted model server on
loopback.

``UPDATE_SCREENSHOTS=1`` refreshes the screenshots of docs/console-editor.md in ``docs/console/``.
"""

from __future__ import annotations

import json
import os
import re
import threading

import pytest

from tests.console.test_browser import CHROMIUM, DOCS, PASSWORD, VIEWPORT, shoot, sign_in
from tests.support.chat_completions import scripted_provider, tool_call_turn
from tests.support.platform_process import PlatformProcess, migrated_database

pytestmark = pytest.mark.slow
_playwright = pytest.importorskip("playwright.sync_api")
expect, sync_playwright = _playwright.expect, _playwright.sync_playwright

SEED = f"""
import json
from django.contrib.auth import get_user_model
from agents import definitions
from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import bundle_from_mapping
from tenants import actions
from tests.support.apps import HANDLERS, cases_manifest
tenant = actions.create_tenant("acme", name="Acme Legal", acting_user=None)
actions.add_member(tenant, "admin", roles=["case_writer"], admin=True, acting_user=None)
user = get_user_model().objects.get(username="admin")
user.set_password({PASSWORD!r})
user.save()
deploy_bundle(tenant, bundle_from_mapping(cases_manifest(), HANDLERS), acting_user=None)
definitions.set_provider_key(tenant, "scripted", "sk-browser", acting_user=None)
agent = {{"name": "helper", "provider": "scripted", "model": "gpt-test", "max_seconds": 60}}
definitions.create_agent(tenant, agent, acting_user=None)
print(json.dumps({{}}))
"""


@pytest.fixture(scope="module")
def model_gate():
    """The scripted model's second turn waits for this: the run stays in progress until the test says."""
    return threading.Event()


@pytest.fixture(scope="module")
def provider(model_gate):
    def held_answer(results):
        model_gate.wait(60)
        return {"text": "Found " + str(len(results)) + " result(s)."}

    with scripted_provider(
        tool_call_turn(("acme_cases_find_case", {"query": "globex"})), held_answer
    ) as scripted:
        yield scripted


@pytest.fixture(scope="module")
def platform(tmp_path_factory, provider):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run .ci/install-system-deps (Debian package chromium)")
    workdir = tmp_path_factory.mktemp("editor-browser")
    database = migrated_database(workdir)
    providers = {"scripted": {"kind": "openai", "base_url": provider.base_url}}
    served = PlatformProcess(workdir, database.url, env={"AGENT_PROVIDERS": json.dumps(providers)})
    try:
        served.python(SEED)
        served.start()
        yield served
    finally:
        served.stop()
        database.drop()


@pytest.fixture(scope="module")
def page(platform):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(base_url=platform.base_url, viewport=VIEWPORT)
        opened = context.new_page()
        sign_in(opened, "admin", "/console/acme/apps/")
        yield opened
        browser.close()


def code_editor(page, path: str):
    """The CodeMirror editor of one file (its textarea, hidden, is what the form posts)."""
    expect(page.locator("html[data-code-editor=ready]")).to_have_count(1)
    return page.locator(f'.cm-content[data-path="{path}"]')


def shoot_app_json(page, name: str) -> None:
    """A screenshot of the live check's findings and app.json's editor (tooltips included)."""
    if os.environ.get("UPDATE_SCREENSHOTS") != "1":
        return
    top, bottom = page.evaluate(
        """() => {
          const boxes = ["#findings", ".file", ".cm-tooltip"]
            .flatMap((s) => [...document.querySelectorAll(s)].slice(0, 1))
            .map((e) => e.getBoundingClientRect());
          const tops = boxes.map((b) => b.top), bottoms = boxes.map((b) => b.bottom);
          return [Math.min(...tops) + scrollY - 12, Math.max(...bottoms) + scrollY + 12];
        }"""
    )
    clip = {"x": 0, "y": max(top, 0), "width": VIEWPORT["width"], "height": bottom - max(top, 0)}
    page.screenshot(path=str(DOCS / f"{name}.png"), clip=clip, full_page=True)


def replace_text(page, path: str, text: str) -> None:
    """Select all of a file in its code editor and put ``text`` in its place, as a paste does."""
    code_editor(page, path).click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(text)


def test_break_the_manifest_see_the_problem_at_its_line_fix_deploy_try_and_roll_back(page):
    page.goto("/console/acme/apps/")
    shoot(page, "editor-apps")
    page.get_by_role("link", name="Edit cases's files").click()
    manifest = page.locator("#file-app-json")  # hidden behind the code editor, kept in step with it
    original = manifest.input_value()
    lines = original.splitlines()
    at = next(i for i, line in enumerate(lines) if '"find_case"' in line)
    lines[at] = lines[at].replace('"find_case"', '"Find Case!"')
    replace_text(page, "app.json", "\n".join(lines))
    # Checked as it is typed (editor.js posts the form the way Check does): no button pressed yet.
    expect(page.locator("li.finding.error").first).to_contain_text(f"app.json line {at + 1}", timeout=15_000)
    page.get_by_role("button", name="Check").click()
    problem = page.locator("li.finding.error").first
    expect(problem).to_contain_text(f"app.json line {at + 1}")
    expect(problem).to_contain_text("/mcp/tools/0/name")
    expect(page.locator("#diff")).to_contain_text("Find Case!")
    shoot(page, "editor-problem")

    fixed = (
        "\n".join(lines)
        .replace('"Find Case!"', '"find_case"')
        .replace("Test tool find_case", "Find cases (edited in the browser)")
    )
    replace_text(page, "app.json", fixed)
    page.get_by_role("button", name="Save draft").click()
    expect(page.locator("#findings")).to_contain_text("No problems: this deploys")
    expect(manifest).to_have_value(re.compile("edited in the browser"))
    page.get_by_role("button", name="Deploy as a new version").click()
    expect(page.locator(".messages")).to_contain_text("Deployed cases v2.")
    expect(page.locator("#file-app-json")).to_have_value(re.compile("edited in the browser"))

    page.goto("/console/acme/apps/cases/playground?tool=acme_cases_find_case")
    page.get_by_label(re.compile("query")).fill("globex")
    page.get_by_role("button", name="Run as me").click()
    expect(page.locator("#result")).to_contain_text("isError: false")
    expect(page.locator("#audit-row")).to_contain_text("ok")
    expect(page.locator("#listing")).to_contain_text("edited in the browser")
    shoot(page, "editor-playground")

    page.goto("/console/acme/apps/cases/playground?tool=acme_cases_boom")
    page.get_by_role("button", name="Run as me").click()
    expect(page.locator("#result")).to_contain_text("isError: true")
    expect(page.locator("#traceback")).to_contain_text("RuntimeError")
    expect(page.locator("#traceback")).to_contain_text("server/boom.py")
    shoot(page, "editor-traceback")

    page.goto("/console/acme/apps/cases/edit")
    page.get_by_role("button", name=re.compile("Roll back cases")).click()
    expect(page.locator(".messages")).to_contain_text("Rolled cases back to v1.")
    page.goto("/console/acme/apps/cases/playground?tool=acme_cases_find_case")
    expect(page.locator("#listing")).not_to_contain_text("edited in the browser")


def test_the_code_editor_completes_from_the_schema_and_shows_each_problem_at_its_line(page):
    refused = []  # what the console's CSP blocked, as the browser reports it
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    answer = page.goto("/console/acme/apps/cases/edit")
    script_policy = next(p for p in answer.headers["content-security-policy"].split(";") if "script-src" in p)
    assert script_policy.split() == ["script-src", "'self'"]
    editor = code_editor(page, "app.json")
    expect(page.locator("#file-app-json")).to_be_hidden()
    expect(code_editor(page, "server/search.py")).to_contain_text("def handle(request):")
    original = page.locator("#file-app-json").input_value()

    # A new key in the root object: offered from the manifest schema with its title, then its values.
    editor.click()
    page.keyboard.press("Control+Home")
    page.keyboard.press("End")  # after the root's "{"
    page.keyboard.press("Enter")
    page.keyboard.type('"isol')
    offered = page.locator(".cm-tooltip-autocomplete li")
    expect(offered.first).to_contain_text("isolation")
    expect(offered.first).to_contain_text("What a handler's calls share")
    offered.first.click()
    page.keyboard.type('"')
    expect(offered).to_have_text(['"version"', '"call"'])  # the schema's enum, its default first
    page.keyboard.type("c")
    expect(offered).to_have_text(['"call"'])
    offered.first.click()
    page.keyboard.type(",")
    expect(page.locator("#file-app-json")).to_have_value(re.compile(r'^\{\n  "isolation": "call",\n  "name"'))
    expect(page.locator("#findings")).to_contain_text("No problems: this deploys", timeout=15_000)
    # Hover help on a key: its title, description and choices.
    page.locator(".cm-line", has_text='"isolation"').hover(position={"x": 50, "y": 8})  # on the key
    expect(page.locator(".cm-tooltip-hover")).to_contain_text("a fresh sandbox child for every call")
    shoot_app_json(page, "editor-code-completion")
    # Asked for (Ctrl+Space) on an empty line: the keys this object may still have, not those it has.
    page.locator(".cm-line", has_text='"isolation"').click()
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.press("Control+Space")
    expect(offered.filter(has_text="version")).to_have_count(1)
    expect(offered.filter(has_text="routes")).to_have_count(0)
    page.keyboard.press("Escape")
    # In a tool (an item of mcp.tools, through the schema's $ref): a tool's keys.
    tool_line = next(i for i, line in enumerate(original.splitlines()) if '"find_case"' in line)
    page.keyboard.press("Control+Home")
    for _ in range(tool_line + 2):  # below the two lines added above; the editor scrolls along
        page.keyboard.press("ArrowDown")
    expect(editor.locator(".cm-activeLine")).to_contain_text('"find_case"')
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.press("Control+Space")
    expect(offered.filter(has_text="maxOutputTokens")).to_contain_text("Output budget")
    expect(offered.filter(has_text="inputSchema")).to_have_count(0)
    page.keyboard.press("Escape")

    # Broken: the validator's problem is a diagnostic at its line, and its link goes there.
    lines = original.splitlines()
    at = next(i for i, line in enumerate(lines) if '"find_case"' in line)
    fixed = "\n".join(lines)
    lines[at] = lines[at].replace('"find_case"', '"Find Case!"')
    replace_text(page, "app.json", "\n".join(lines))
    finding = page.locator("li.finding.error").first
    expect(finding).to_contain_text(f"app.json line {at + 1}", timeout=15_000)
    finding.get_by_role("link").click()
    broken_line = editor.locator(".cm-activeLine")
    expect(broken_line).to_contain_text('"Find Case!"')
    expect(broken_line.locator(".cm-lintRange-error")).to_have_count(1)
    expect(page.locator(".cm-lint-marker-error")).to_have_count(1)
    broken_line.locator(".cm-lintRange-error").hover()
    expect(page.locator(".cm-tooltip-lint")).to_contain_text("/mcp/tools/0/name")
    shoot_app_json(page, "editor-code-problem")

    # Fixed by typing over the bad name: the diagnostic goes with the problem.
    broken_line.click()
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")
    page.keyboard.type('"name": "find_case",')
    expect(page.locator("#findings")).to_contain_text("No problems: this deploys", timeout=15_000)
    expect(page.locator(".cm-lintRange-error")).to_have_count(0)
    expect(page.locator("#file-app-json")).to_have_value(fixed)
    assert refused == []


def test_without_javascript_the_textareas_are_the_editor(page, platform):
    context = page.context.browser.new_context(
        base_url=platform.base_url, viewport=VIEWPORT, java_script_enabled=False
    )
    try:
        plain = context.new_page()
        sign_in(plain, "admin", "/console/acme/apps/cases/edit")
        expect(plain.locator(".cm-editor")).to_have_count(0)
        manifest = plain.get_by_label("app.json")
        expect(manifest).to_be_visible()
        text = manifest.input_value()
        manifest.fill(text.replace('"find_case"', '"Find Case!"', 1))
        plain.get_by_role("button", name="Check").click()
        expect(plain.locator("li.finding.error").first).to_contain_text("/mcp/tools/0/name")
        plain.get_by_label("app.json").fill(text)
        plain.get_by_role("button", name="Check").click()
        expect(plain.locator("#findings")).to_contain_text("No problems: this deploys")
    finally:
        context.close()


def test_the_agent_run_page_updates_live_while_the_run_proceeds(page, model_gate, provider):
    page.goto("/console/acme/agents/helper/")
    page.get_by_label("Message").fill("Find the Globex case")
    page.get_by_role("button", name="Send").click()
    expect(page).to_have_url(re.compile(r"/agents/helper/runs/arun_"))
    # The model's first turn calls a tool; the page shows that step while the run still waits on the model.
    expect(page.locator("#steps")).to_contain_text("acme_cases_find_case", timeout=30_000)
    expect(page.locator("#run-status")).to_contain_text("running")
    assert not model_gate.is_set() and len(provider.requests) >= 1
    model_gate.set()  # the model answers now; nobody touches the page
    expect(page.locator("#answer")).to_contain_text("Found", timeout=30_000)
    expect(page.locator("#run-status")).to_contain_text("completed")
    shoot(page, "editor-agent-run")
