"""The console in a real browser (Debian's chromium, driven by Playwright) against ``manage.py serve``.

One served platform and one browser for the module. Each test signs in through ``/accounts/login/``,
uses the console as a person would (no JavaScript is needed for any of it), and checks the result
with the official MCP SDK client over HTTP where a client would notice.

Set ``UPDATE_SCREENSHOTS=1`` to refresh the manual's screenshots of every page in ``docs/console/``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import json
import os
import re
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import MCPError

from tests.console.conftest import bundle_files, zip_of
from tests.mcp_gateway.conftest import mcp_client
from tests.support.apps import cases_manifest
from tests.support.platform_process import PlatformProcess, migrated_database

pytestmark = pytest.mark.slow
# Collected (and skipped) on a machine without the dev extra's browser driver.
_playwright = pytest.importorskip("playwright.sync_api")
Page, expect, sync_playwright = _playwright.Page, _playwright.expect, _playwright.sync_playwright

CHROMIUM = "/usr/bin/chromium"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "console"
PASSWORD = "console-browser-pass"
SEED = f"""
import json
from django.contrib.auth import get_user_model
from tenants import actions
tenant = actions.create_tenant("acme", name="Acme Legal", acting_user=None)
actions.add_member(tenant, "admin", roles=["case_writer"], admin=True, acting_user=None)
actions.add_member(tenant, "reader", roles=["case_reader"], acting_user=None)
for name in ("admin", "reader"):
    user = get_user_model().objects.get(username=name)
    user.set_password({PASSWORD!r})
    user.save()
print(json.dumps({{"reader": actions.issue_token(tenant, "reader", name="seeded", acting_user=None)[1]}}))
"""
APP_TOOLS = 8


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run .ci/install-system-deps (Debian package chromium)")
    workdir = tmp_path_factory.mktemp("console-browser")
    database = migrated_database(workdir)
    served = PlatformProcess(workdir, database.url)
    try:
        served.tokens = served.python(SEED)
        served.start()
        yield served
    finally:
        served.stop()
        database.drop()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


VIEWPORT = {"width": 1280, "height": 800}  # a laptop screen


def sign_in(page: Page, username: str, next_path: str) -> None:
    page.goto(next_path)  # the console sends an anonymous visitor to sign in, and back afterwards
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(re.escape(next_path) + "$"))


@pytest.fixture(scope="module")
def sessions(browser, platform, tmp_path_factory):
    """Each person signs in once, through the sign-in page; tests reuse the session cookie."""
    folder = tmp_path_factory.mktemp("sessions")
    states = {}
    for username in ("admin", "reader"):
        context = browser.new_context(base_url=platform.base_url, viewport=VIEWPORT)
        sign_in(context.new_page(), username, "/console/")
        states[username] = str(folder / f"{username}.json")
        context.storage_state(path=states[username])
        context.close()
    return states


@pytest.fixture
def as_person(browser, platform, sessions):
    contexts = []

    def open_as(username: str, path: str) -> Page:
        context = browser.new_context(
            base_url=platform.base_url, viewport=VIEWPORT, storage_state=sessions[username]
        )
        contexts.append(context)
        opened = context.new_page()
        opened.goto(path)
        return opened

    yield open_as
    for context in contexts:
        context.close()


def in_thread(fn, *args):
    """Run an async SDK call on a thread of its own: Playwright's sync API owns this thread's loop."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, fn, *args).result()


def sdk_tools(url: str, token: str) -> list[dict]:
    """Every tool the official SDK client lists, as the wire JSON it received."""

    async def listed():
        tools, cursor = [], None
        async with mcp_client(url, token) as client:
            while True:
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
                if (cursor := page.next_cursor) is None:
                    return tools

    return in_thread(listed)


def sdk_call(url: str, token: str, name: str, arguments: dict) -> bool:
    """Call one tool with the SDK client; True when the tool answered without an error."""

    async def called():
        async with mcp_client(url, token) as client:
            return not (await client.call_tool(name, arguments)).is_error

    return in_thread(called)


def bare_status(url: str, token: str) -> int:
    """The HTTP status of a bare tools/list POST (what the SDK client turns into an exception)."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    return httpx2.post(url, headers=headers, json=message, timeout=30).status_code


def shoot(page: Page, name: str) -> None:
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / f"{name}.png"), full_page=True)


def deploy_zip(page: Page, tmp_path: Path, files: dict[str, bytes], name: str = "bundle.zip") -> None:
    archive = tmp_path / name
    archive.write_bytes(zip_of(files))
    page.get_by_label("A .zip of the bundle").set_input_files(archive)
    page.get_by_role("button", name="Deploy", exact=True).click()


def test_signing_in_leads_back_to_the_page_asked_for(browser, platform):
    context = browser.new_context(base_url=platform.base_url, viewport=VIEWPORT)
    page = context.new_page()
    sign_in(page, "admin", "/console/acme/apps/")
    expect(page.get_by_role("heading", name="Apps", exact=True)).to_be_visible()
    context.close()


def test_deploy_a_good_zip_then_a_folder_then_roll_back(as_person, tmp_path):
    page = as_person("admin", "/console/acme/apps/")
    deploy_zip(page, tmp_path, bundle_files())
    expect(page.get_by_text(f"Deployed cases v1 with {APP_TOOLS} tools.")).to_be_visible()
    folder = tmp_path / "cases"
    for path, data in bundle_files(cases_manifest(title="Cases, second")).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    page.get_by_label("The bundle's folder").set_input_files(folder)
    page.get_by_role("button", name="Deploy", exact=True).click()
    expect(page.get_by_text(f"Deployed cases v2 with {APP_TOOLS} tools.")).to_be_visible()
    shoot(page, "apps")
    page.get_by_role("button", name="Roll back cases to v1").click()
    expect(page.get_by_text("Rolled cases back to v1.")).to_be_visible()
    expect(page.get_by_role("row", name="v1 (active)")).to_be_visible()


def test_a_bad_zip_shows_its_problems_inline_and_deploys_nothing(as_person, tmp_path):
    page = as_person("admin", "/console/acme/apps/")
    manifest = cases_manifest(name="Bad Name")
    manifest["mcp"]["tools"][0]["route"] = "GET /nowhere"
    deploy_zip(page, tmp_path, bundle_files(manifest), name="bad.zip")
    problems = page.locator("#problems li")
    expect(problems).to_have_count(2)
    expect(problems.filter(has_text="/name: app name 'Bad Name' must match")).to_have_count(1)
    expect(problems.filter(has_text="/mcp/tools/0/route: 'GET /nowhere' is not a route")).to_have_count(1)
    shoot(page, "apps-problems")


def test_switching_app_tools_off_reaches_the_sdk_client(as_person, platform):
    url = f"{platform.base_url}/t/acme/mcp"
    page = as_person("admin", "/console/acme/settings/")
    before = sdk_tools(url, platform.tokens["reader"])
    page.get_by_role("button", name="Switch customAppsMcpTools off").click()
    expect(page.get_by_text("customAppsMcpTools is now off.")).to_be_visible()
    shoot(page, "settings")
    assert [t["name"] for t in sdk_tools(url, platform.tokens["reader"])] == [
        t["name"] for t in before if not t["name"].startswith("acme_cases_")
    ]
    page.get_by_role("button", name="Switch customAppsMcpTools on").click()
    expect(page.get_by_text("customAppsMcpTools is now on.")).to_be_visible()
    assert sdk_tools(url, platform.tokens["reader"]) == before


def test_preview_as_a_role_is_what_the_sdk_client_with_that_roles_token_lists(as_person, platform):
    page = as_person("admin", "/console/acme/preview/")
    page.get_by_label("A set of roles").check()
    page.get_by_label("Roles", exact=True).fill("case_reader")
    page.get_by_role("button", name="Preview").click()
    shown = json.loads(page.locator("#preview-json").text_content())
    listed = sdk_tools(f"{platform.base_url}/t/acme/mcp", platform.tokens["reader"])
    assert shown == listed
    expect(page.locator("#preview-count")).to_have_text(str(len(listed)))
    shoot(page, "preview")


def test_issue_a_token_then_revoke_it_and_the_client_is_refused(as_person, platform):
    url = f"{platform.base_url}/t/acme/mcp"
    page = as_person("admin", "/console/acme/tokens/")
    page.get_by_label("Member").select_option("reader")
    page.get_by_label("Name").fill("laptop")
    page.get_by_role("button", name="Issue token").click()
    secret = page.get_by_label("Token", exact=True).input_value()
    assert sdk_tools(url, secret)
    page.get_by_role("button", name="Revoke laptop").click()
    expect(page.get_by_text("Revoked token laptop of reader.")).to_be_visible()
    shoot(page, "tokens")
    assert bare_status(url, secret) == 401
    with pytest.raises(ExceptionGroup) as refused:  # the client's task group wraps its MCPError
        sdk_tools(url, secret)
    assert refused.group_contains(MCPError)


def test_the_python_snippet_of_connect_runs_as_shown(as_person, platform, monkeypatch):
    page = as_person("reader", "/console/acme/connect/")
    shoot(page, "connect")
    snippet = page.locator("#snippet-python-sdk").text_content()
    monkeypatch.setenv("LCP_TOKEN", platform.tokens["reader"])
    printed = io.StringIO()

    def run_snippet() -> None:
        with contextlib.redirect_stdout(printed):
            exec(compile(snippet, "snippet.py", "exec"), {"__name__": "__main__"})  # noqa: S102

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # the snippet runs its own event loop
        pool.submit(run_snippet).result()
    assert "acme_records_query" in printed.getvalue().split()


def test_every_page_renders_for_an_admin(as_person, platform):
    """Each page of the navigation opens without errors (and is photographed when asked)."""
    url, token = f"{platform.base_url}/t/acme/mcp", platform.tokens["reader"]
    assert sdk_call(url, token, "acme_collections_list", {})  # something for the audit to show
    if "acme_cases_boom" in [t["name"] for t in sdk_tools(url, token)]:
        assert not sdk_call(url, token, "acme_cases_boom", {})  # and an error to read
    page = as_person("admin", "/console/")
    background = page.eval_on_selector("body", "body => getComputedStyle(body).backgroundColor")
    assert background == "rgb(244, 245, 247)", "console.css is not applied"
    shoot(page, "index")
    for path, name in [
        ("tools/", "tools"),
        ("members/", "members"),
        ("connections/", "connections"),
        ("audit/", "audit"),
        ("errors/", "errors"),
        ("runs/", "runs"),
    ]:
        response = page.goto(f"/console/acme/{path}")
        assert response.status == 200, path
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        shoot(page, name)
    page.goto("/console/acme/errors/")
    if page.locator("main table a").count():
        page.locator("main table a").first.click()
        expect(page.get_by_role("heading", name=re.compile("^Error "))).to_be_visible()
        shoot(page, "error")
