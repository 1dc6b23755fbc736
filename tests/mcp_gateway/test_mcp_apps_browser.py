"""The demo's case card as an MCP Apps view, in a real browser host.

The host (``tests/support/mcp_apps_host/host.js``) is built on what real hosts use: the TypeScript
SDK's ``Client`` over Streamable HTTP with the demo admin's token, and ext-apps' ``AppBridge``. It is
served at the platform's own origin (Playwright answers its two URLs), so its MCP requests are
same-origin; the view runs in a sandboxed iframe (an opaque origin) under the CSP the view declares,
and loads the ext-apps SDK from the platform. Debian's chromium, never a downloaded browser.

Set ``UPDATE_SCREENSHOTS=1`` to refresh ``docs/mcp-apps/case-card*.png``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from tests.mcp_gateway.conftest import mcp_client
from tests.support.platform_process import ROOT, PlatformProcess, migrated_database

pytestmark = pytest.mark.slow
_playwright = pytest.importorskip("playwright.sync_api")
expect, sync_playwright = _playwright.expect, _playwright.sync_playwright

CHROMIUM = "/usr/bin/chromium"
HOST = ROOT / "tests" / "support" / "mcp_apps_host"
DOCS = ROOT / "docs" / "mcp-apps"
# Everything here is on 127.0.0.1, and Chromium's Local Network Access asks a person's permission before
# a page (here the view's opaque origin) loads from the loopback address space. A deployed platform and
# its hosts are on public addresses, where the check does not apply: the test turns it off.
LOOPBACK_ONLY = ["--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests"]
# The host's steps, with a deadline of its own so a hang fails with what the page shows.
RUN_HOST = """(a) => Promise.race([
  runHost(a),
  new Promise((_, no) => setTimeout(() => no(new Error("host timed out")), 60000)),
])"""


@pytest.fixture(scope="module")
def host_bundle() -> Path:
    built = subprocess.run(
        ["bash", str(ROOT / ".ci" / "build-apps-host")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, f"building the test host failed: {built.stderr[-2000:]}"
    return Path(built.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run .ci/install-system-deps (Debian package chromium)")
    workdir = tmp_path_factory.mktemp("mcp-apps")
    database = migrated_database(workdir)
    served = PlatformProcess(workdir, database.url)
    try:
        out = served.manage("seed_demo", "--base-url", served.base_url).stdout
        served.tokens = {
            line.split()[0]: line.split()[1] for line in out.splitlines() if line.startswith("  ")
        }
        served.start()
        yield served
    finally:
        served.stop()
        database.drop()


def _case_id(url: str, token: str) -> str:
    async def find():
        async with mcp_client(url, token) as client:
            found = await client.call_tool("acme_case_portal_find_case", {"query": "Ada"})
            return found.structured_content["result"][0]["id"]

    return anyio.run(find)


def test_the_case_card_renders_in_a_host_and_its_button_escalates_through_the_gateway(demo, host_bundle):
    url = f"{demo.base_url}/t/acme/mcp"
    token = demo.tokens["admin"]
    case_id = _case_id(url, token)
    messages: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", *LOOPBACK_ONLY])
        try:
            page = browser.new_page(viewport={"width": 640, "height": 480})
            page.on("console", lambda message: messages.append(message.text))
            page.on("pageerror", lambda error: messages.append(f"pageerror: {error}"))
            page.route(
                f"{demo.base_url}/__host/index.html", lambda route: route.fulfill(path=HOST / "index.html")
            )
            page.route(
                f"{demo.base_url}/__host/host.bundle.js",
                lambda route: route.fulfill(path=host_bundle, content_type="text/javascript"),
            )
            page.goto(f"{demo.base_url}/__host/index.html")
            page.wait_for_function("typeof window.runHost === 'function'")
            args = {"case_id": case_id}
            started = _run_host(
                page,
                messages,
                {"url": url, "token": token, "toolName": "acme_case_portal_get_case", "args": args},
            )
            assert started == {"uri": "ui://case_portal/case_card", "initialized": True}

            view = page.frame_locator("iframe")
            expect(view.locator("#client")).to_have_text("Ada Lovelace")
            expect(view.locator("#reference")).to_have_text("C-1001")
            expect(view.locator("#escalate")).to_be_visible()
            screenshot(page, "case-card.png")

            view.locator("#escalate-button").click()
            expect(view.locator("#message")).to_have_text("Escalated.", timeout=20_000)
            expect(view.locator("#badge")).to_be_visible()
            expect(view.locator("#escalate")).to_be_hidden()  # an escalated case offers no second escalation
            screenshot(page, "case-card-escalated.png")
        finally:
            browser.close()

    # escalate_case asks for confirmation: the platform asked the host's user, who accepted.
    assert any(m.startswith("[HOST] asked:") and "Escalate a case" in m for m in messages), messages
    assert not [m for m in messages if "Content Security Policy" in m or "Refused to" in m], messages

    async def check():
        async with mcp_client(url, token) as client:
            case = await client.call_tool("acme_case_portal_get_case", {"case_id": case_id})
            return case.structured_content

    assert anyio.run(check)["escalated"] is True
    rows = demo.python(
        "import json; from mcp_gateway.models import ToolCallAudit as A; "
        "print(json.dumps(list(A.all_tenants.filter(wire_name='acme_case_portal_escalate_case')"
        ".values_list('outcome', 'user__username'))))"
    )
    # The view's call ran as the admin, with every check of a normal call, confirmation included.
    assert ["confirmed", "admin"] in rows


def _run_host(page, messages: list[str], arguments: dict) -> dict:
    try:
        return page.evaluate(RUN_HOST, arguments)
    except _playwright.Error as err:
        raise AssertionError(f"{err.message}\nconsole: {messages}") from err


def screenshot(page, name: str) -> None:
    if os.environ.get("UPDATE_SCREENSHOTS"):
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / name))
