"""A new app from the crud template in a real browser (Debian's chromium, Playwright) against
``manage.py serve``: two picked fields, deployed, its create and list tools run in the playground, its
resource read, and one item shown in its screen on the front-end path's host page.

``UPDATE_SCREENSHOTS=1`` refreshes the screenshots of docs/console-editor.md's "New app" part.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.console.test_browser import CHROMIUM, PASSWORD, VIEWPORT, shoot, sign_in
from tests.support.platform_process import PlatformProcess, migrated_database

pytestmark = pytest.mark.slow
_playwright = pytest.importorskip("playwright.sync_api")
expect, sync_playwright = _playwright.expect, _playwright.sync_playwright

SEED = f"""
import json
from django.contrib.auth import get_user_model
from tenants import actions
tenant = actions.create_tenant("acme", name="Acme Legal", acting_user=None)
actions.add_member(tenant, "admin", admin=True, acting_user=None)
user = get_user_model().objects.get(username="admin")
user.set_password({PASSWORD!r})
user.save()
print(json.dumps({{}}))
"""


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run .ci/install-system-deps (Debian package chromium)")
    workdir = tmp_path_factory.mktemp("new-app-browser")
    database = migrated_database(workdir)
    served = PlatformProcess(workdir, database.url)
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


def test_a_crud_app_with_two_picked_fields_is_made_deployed_tried_and_shown_in_its_screen(page):
    page.goto("/console/acme/apps/")
    page.get_by_role("link", name="New app from a template").click()
    page.get_by_role("radio", name=re.compile(r"\bcrud\b")).check()
    page.get_by_label("App name").fill("parts")
    # The default rows are lcp init's (title, notes, done): keep two rows, and make them the admin's.
    page.get_by_role("button", name="Remove field 3").click()
    page.get_by_role("button", name="Remove field 2").click()
    page.get_by_role("button", name="Add a field").click()
    expect(page.get_by_label("App name")).to_have_value("parts")  # kept across the round trips
    page.get_by_label("Name of field 1").fill("sku")
    page.get_by_label("Field 1 is required").check()
    page.get_by_label("Name of field 2").fill("price")
    page.get_by_label("Type of field 2").select_option("number")
    shoot(page, "new-app")
    page.get_by_role("button", name="Create and deploy", exact=True).click()
    expect(page.locator(".messages")).to_contain_text(
        "Created parts from the crud template and deployed it as v1 with 5 tools."
    )
    expect(page.locator("#file-app-json")).to_have_value(re.compile('"sku"'))  # opened in the editor

    page.goto("/console/acme/apps/parts/playground?tool=acme_parts_create_item")
    page.get_by_label(re.compile("^sku")).fill("A-100")
    page.get_by_label(re.compile("^price")).fill("2.5")
    page.get_by_role("button", name="Run as me").click()
    expect(page.locator("#result")).to_contain_text("isError: false")
    expect(page.locator("#structured")).to_contain_text('"price": 2.5')

    page.goto("/console/acme/apps/parts/playground?tool=acme_parts_list_items")
    page.get_by_role("button", name="Run as me").click()
    expect(page.locator("#result")).to_contain_text("isError: false")
    expect(page.locator("#structured")).to_contain_text('"sku": "A-100"')
    expect(page.locator("#audit-row")).to_contain_text("acme_parts_list_items")
    shoot(page, "new-app-playground")

    page.get_by_label("Resource").select_option(label="parts://guide")
    page.get_by_role("button", name="Pick resource").click()
    page.get_by_role("button", name="Read as me").click()
    expect(page.locator("#answer")).to_contain_text("parts://guide (text/markdown)")
    expect(page.locator("#answer")).to_contain_text("# How to keep the list")
    shoot(page, "new-app-resource")

    # One item in its screen, on the front-end path's host page (the screen's script runs there).
    page.goto("/console/acme/apps/parts/playground?tool=acme_parts_list_items")
    page.get_by_role("button", name="Run as me").click()
    item_id = re.search(r'"id": "([^"]+)"', page.locator("#structured").inner_text()).group(1)
    page.goto("/console/acme/apps/parts/playground?tool=acme_parts_get_item")
    page.get_by_label(re.compile("^item_id")).fill(item_id)
    page.get_by_role("button", name="Run as me").click()
    with page.context.expect_page() as opened:
        page.get_by_role("link", name="Show this call in its screen").click()
    host = opened.value
    card = host.frame_locator("iframe")
    expect(card.locator("#heading")).to_have_text("A-100", timeout=30_000)
    expect(card.locator("#fields")).to_contain_text("price")
    shoot(host, "new-app-screen")
    host.close()
