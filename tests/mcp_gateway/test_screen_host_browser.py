"""Screens on the front-end path in a real browser (Debian's chromium, driven by Playwright).

A hostile tenant's public screen, opened by another tenant's signed-in admin, tries everything a
script on the platform's origin could do with the visitor's session, and writes what it observed
into its own page, which the test reads: every attempt is refused. The demo's case card, on the
same path, escalates through the host page, which asks for the confirmation in its own dialog.
Both run twice: screens in a sandboxed frame on the platform's host, and on ``SCREENS_ORIGIN``
(``localhost``, another site than ``127.0.0.1`` for cookies).

Set ``UPDATE_SCREENSHOTS=1`` to refresh ``docs/screens/host-page.png``.
"""

from __future__ import annotations

import json
import os
import re

import anyio
import pytest

from tests.mcp_gateway.conftest import mcp_client
from tests.support.platform_process import ROOT, PlatformProcess, migrated_database

pytestmark = pytest.mark.slow
_playwright = pytest.importorskip("playwright.sync_api")
expect, sync_playwright = _playwright.expect, _playwright.sync_playwright

CHROMIUM = "/usr/bin/chromium"
DOCS = ROOT / "docs" / "screens"
PASSWORD = "screen-host-browser-pass"
# As in test_mcp_apps_browser: Chromium asks a person before a page loads from loopback; off here.
LOOPBACK_ONLY = ["--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests"]

# The hostile screen: each attempt's outcome, "refused: <error>" or "allowed: <what it got>".
ATTACKS = """
const report = {};
async function attempt(name, run) {
  try {
    report[name] = "allowed: " + String(await run()).slice(0, 300);
  } catch (error) {
    report[name] = "refused: " + (error && error.name);
  }
}
async function get(url, options = {}) {
  const answer = await fetch(url, { credentials: "include", ...options });
  return answer.status + " " + (await answer.text()).slice(0, 200);
}
await attempt("cookie", () => document.cookie);
await attempt("api_members", () => get("/api/tenants/acme/members"));
await attempt("api_mint_token", () =>
  get("/api/tenants/acme/tokens", { method: "POST", headers: { "Content-Type": "application/json" },
                                     body: JSON.stringify({ username: "admin", name: "stolen" }) }));
await attempt("console", () => get("/console/acme/"));
await attempt("csrf_theft", async () => {
  const page = await (await fetch("/console/acme/tokens/", { credentials: "include" })).text();
  return page.match(/csrfmiddlewaretoken" value="([^"]+)"/)[1];
});
await attempt("admin", () => get("/admin/"));
await attempt("accounts", () => get("/accounts/login/"));
await attempt("own_app_route", () => get("/t/evil/apps/evilapp/whoami"));
await attempt("victim_app_route", () => get("/t/acme/apps/case_portal/cases/search?query=Ada"));
await attempt("top_document", () => window.top.document.cookie);
await attempt("top_location", () => window.top.location.href);
await attempt("parent_storage", () => window.parent.localStorage.length);
await attempt("local_storage", () => { localStorage.setItem("x", "1"); return localStorage.length; });
await attempt("session_storage", () => { sessionStorage.setItem("x", "1"); return sessionStorage.length; });
await attempt("indexed_db", () => new Promise((ok, no) => {
  const opened = indexedDB.open("x");
  opened.onsuccess = () => ok("opened");
  opened.onerror = () => no(opened.error);
}));
await attempt("xhr", () => new Promise((ok, no) => {
  const request = new XMLHttpRequest();
  request.open("GET", "/api/tenants/acme/settings");
  request.withCredentials = true;
  request.onload = () => ok(request.status + " " + request.responseText.slice(0, 100));
  request.onerror = () => no(new TypeError("network error"));
  request.send();
}));
document.getElementById("report").textContent = JSON.stringify(report);
"""
EVIL_MANIFEST = {
    "name": "evilapp",
    "title": "Free coupons",
    "description": "Looks harmless.",
    "routes": {"GET /whoami": {"handler": "server/whoami.py", "auth": "public"}},
    "screens": {
        "s": {
            "file": "screens/s.html",
            "title": "Coupons",
            "description": "A public screen.",
            "auth": "public",
            # Declaring the platform's origin widens nothing: the platform drops it from the policy.
            "csp": {"connectDomains": ["PLATFORM"]},
        }
    },
}
EVIL_FILES = {
    "server/whoami.py": "def handle(request):\n    return {'user': request.user}\n",
    "screens/s.html": "<!doctype html><html><head><title>Coupons</title></head><body><pre id=report>"
    "running</pre><script type=module src=s.js></script></body></html>\n",
    "screens/s.js": ATTACKS,
}


@pytest.fixture(scope="module", params=["sandboxed", "screens-origin"])
def demo(request, tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run .ci/install-system-deps (Debian package chromium)")
    workdir = tmp_path_factory.mktemp("screen-host")
    database = migrated_database(workdir)
    served = PlatformProcess(workdir, database.url)
    if request.param == "screens-origin":
        served._extra_env["SCREENS_ORIGIN"] = f"http://localhost:{served.port}"
    try:
        out = served.manage("seed_demo", "--base-url", served.base_url).stdout
        served.tokens = {
            line.split()[0]: line.split()[1] for line in out.splitlines() if line.startswith("  ")
        }
        bundle = workdir / "evilapp"
        for path, text in EVIL_FILES.items():
            (bundle / path).parent.mkdir(parents=True, exist_ok=True)
            (bundle / path).write_text(text)
        manifest = json.dumps(EVIL_MANIFEST).replace("PLATFORM", served.base_url)
        (bundle / "app.json").write_text(manifest)
        served.python(
            "import json; from django.contrib.auth import get_user_model; from tenants import actions\n"
            "evil = actions.create_tenant('evil', name='Evil Inc', acting_user=None)\n"
            "actions.add_member(evil, 'mallory', admin=True, acting_user=None)\n"
            "user = get_user_model().objects.get(username='admin')\n"
            f"user.set_password({PASSWORD!r}); user.save(); print(json.dumps(True))"
        )
        served.manage("deploy", "evil", str(bundle))
        served.mode = request.param
        served.start()
        yield served
    finally:
        served.stop()
        database.drop()


@pytest.fixture(scope="module")
def browser(demo, case_id):
    """One Chromium for each served demo (a launch is ~2 s of CPU); every test gets a context of its own.

    Made after ``case_id``: its MCP client runs an event loop in this thread, which a live sync
    Playwright would refuse.
    """
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", *LOOPBACK_ONLY])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def admin_page(demo, browser):
    """acme's admin, signed in through the sign-in page, in a browser context of its own (fresh cookies)."""
    messages: list[str] = []
    context = browser.new_context(base_url=demo.base_url, viewport={"width": 760, "height": 620})
    try:
        page = context.new_page()
        page.on("console", lambda message: messages.append(message.text))
        page.on("pageerror", lambda error: messages.append(f"pageerror: {error}"))
        page.goto("/console/acme/")
        page.get_by_label("Username").fill("admin")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(re.compile(r"/console/acme/"))  # signed in, and back
        page.messages = messages
        yield page
    finally:
        context.close()


def acme_tokens(demo) -> int:
    return demo.python(
        "import json; from tenants.models import ApiToken; "
        "print(json.dumps(ApiToken.all_tenants.filter(tenant__slug='acme').count()))"
    )


def test_a_hostile_public_screen_gets_nothing_of_its_visitors_session(demo, admin_page):
    tokens_before = acme_tokens(demo)
    admin_page.goto("/t/evil/apps/evilapp/_screens/s")
    report = admin_page.frame_locator("#screen").locator("#report")
    expect(report).not_to_have_text("running", timeout=30_000)
    observed = json.loads(report.text_content())
    assert set(observed) == {
        "cookie", "api_members", "api_mint_token", "console", "csrf_theft", "admin", "accounts",
        "own_app_route", "victim_app_route", "top_document", "top_location", "parent_storage",
        "local_storage", "session_storage", "indexed_db", "xhr",
    }  # fmt: skip
    allowed = {name: what for name, what in observed.items() if not what.startswith("refused: ")}
    assert allowed == {}, observed
    # The opaque origin: no cookie jar, no storage, no reach into the host page.
    for name in (
        "cookie",
        "local_storage",
        "session_storage",
        "top_document",
        "top_location",
        "parent_storage",
    ):
        assert observed[name] == "refused: SecurityError", observed
    # Every request to the platform is stopped before it leaves (TypeError: Failed to fetch).
    assert observed["api_members"] == observed["csrf_theft"] == "refused: TypeError", observed
    assert acme_tokens(demo) == tokens_before  # nothing was minted
    # The host page itself still has the admin's session: only the frame is cut off.
    assert "sessionid" in {cookie["name"] for cookie in admin_page.context.cookies()}
    frame_url = admin_page.frame_locator("#screen").locator(":root").evaluate("() => location.href")
    expected = "http://localhost:" if demo.mode == "screens-origin" else f"{demo.base_url}/"
    assert frame_url.startswith(expected), frame_url


def escalations(demo) -> list[list[str]]:
    return demo.python(
        "import json; from mcp_gateway.models import ToolCallAudit as A; "
        "print(json.dumps(list(A.all_tenants.filter(wire_name='acme_case_portal_escalate_case')"
        ".order_by('id').values_list('outcome', 'user__username'))))"
    )


@pytest.fixture(scope="module")
def case_id(demo) -> str:
    """Ada's case, found with the admin's token (before any browser: both want the thread's event loop)."""

    async def find():
        async with mcp_client(f"{demo.base_url}/t/acme/mcp", demo.tokens["admin"]) as client:
            found = await client.call_tool("acme_case_portal_find_case", {"query": "Ada"})
            return found.structured_content["result"][0]["id"]

    return anyio.run(find)


def test_declining_on_the_host_page_runs_nothing(demo, case_id, admin_page):
    admin_page.goto(f"/t/acme/apps/case_portal/_screens/case_card?case_id={case_id}")
    card = admin_page.frame_locator("#screen")
    expect(card.locator("#client")).to_have_text("Ada Lovelace", timeout=30_000)
    card.locator("#escalate-button").click()
    admin_page.locator("dialog#confirm").get_by_role("button", name="Cancel").click()
    expect(card.locator("#message")).to_contain_text("declined")
    expect(card.locator("#escalate")).to_be_visible()  # not escalated
    assert escalations(demo) == [["declined", "admin"]]


def test_the_case_card_escalates_through_the_host_page_with_its_confirmation(demo, case_id, admin_page):
    admin_page.goto(f"/t/acme/apps/case_portal/_screens/case_card?case_id={case_id}")
    card = admin_page.frame_locator("#screen")
    expect(card.locator("#client")).to_have_text("Ada Lovelace", timeout=30_000)
    expect(card.locator("#reference")).to_have_text("C-1001")
    card.locator("#reason").fill("The client asked for a manager, twice")
    card.locator("#escalate-button").click()
    # The question is the host page's own, in its DOM, outside the frame.
    dialog = admin_page.locator("dialog#confirm")
    expect(dialog).to_be_visible()
    expect(admin_page.locator("#confirm-message")).to_contain_text("Escalate a case")
    expect(admin_page.locator("#confirm-message")).to_contain_text("The client asked for a manager, twice")
    if os.environ.get("UPDATE_SCREENSHOTS") and demo.mode == "sandboxed":
        DOCS.mkdir(parents=True, exist_ok=True)
        admin_page.screenshot(path=str(DOCS / "host-page.png"))
    dialog.get_by_role("button", name="Run it").click()
    expect(card.locator("#message")).to_have_text("Escalated.", timeout=20_000)
    expect(card.locator("#badge")).to_be_visible()
    assert not [m for m in admin_page.messages if "Refused to" in m or "pageerror" in m], admin_page.messages
    # The view's call ran as the admin, confirmed on the host page.
    assert escalations(demo) == [["declined", "admin"], ["confirmed", "admin"]]
