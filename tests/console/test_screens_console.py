"""The console shows each app's screens (with a link that opens them) and marks the tools that show one."""

from __future__ import annotations

import pytest

from tests.support.screen_app import FILES, screen_manifest

pytestmark = pytest.mark.django_db


def test_the_apps_page_lists_each_screen_with_a_link_that_opens_it(signed_in, acme, deploy):
    deploy(acme, screen_manifest(), FILES)
    client = signed_in("admin")
    body = client.get("/console/acme/apps/").content.decode()
    assert '<a href="/t/acme/apps/cases/_screens/card" target="_blank" rel="noopener">Case card</a>' in body
    assert "<code>screens/plain.html</code> · <code>role:case_writer</code>" in body
    opened = client.get("/t/acme/apps/cases/_screens/card")  # the admin's session opens it
    assert opened.status_code == 200 and "Content-Security-Policy" in opened


def test_the_tools_page_marks_tools_that_show_a_screen_and_who_they_are_for(signed_in, acme, deploy):
    deploy(acme, screen_manifest(), FILES)
    body = signed_in("admin").get("/console/acme/tools/").content.decode()
    row = lambda name: body[body.index(f"<code>acme_cases_{name}</code>") :].split("</tr>")[0]  # noqa: E731
    assert "shows a screen" in row("get_case") and "hosts only" not in row("get_case")
    assert "UI hosts only" in row("card_only")
    assert "views only" in row("refresh")
    assert "shows a screen" not in row("find_case")
