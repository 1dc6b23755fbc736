"""New app from a template in the console: the generator lcp init uses, the fields the admin picks,
deployed as version 1 through the one deploy, and refused with each problem at its row."""

from __future__ import annotations

import pytest

from app_templates import Field, render
from apps_runtime.bundles import unpack_files
from apps_runtime.models import App, AppVersion

pytestmark = pytest.mark.django_db
NEW = "/console/acme/apps/new"


def rows(*fields: tuple[str, str, bool]) -> dict[str, str]:
    posted = {"field-count": str(len(fields))}
    for n, (name, kind, required) in enumerate(fields):
        posted |= {f"field-{n}-name": name, f"field-{n}-type": kind}
        if required:
            posted[f"field-{n}-required"] = "on"
    return posted


def test_crud_with_two_picked_fields_is_deployed_as_v1_and_opened_in_the_editor(signed_in, acme):
    client = signed_in("admin")
    posted = {"template": "crud", "name": "parts", "action": "create"}
    answer = client.post(NEW, posted | rows(("sku", "string", True), ("count", "integer", False)))
    assert answer.status_code == 302 and answer["Location"] == "/console/acme/apps/parts/edit"
    version = AppVersion.objects.for_tenant(acme).get(app__name="parts")
    assert version.number == 1 and version.created_by.username == "admin"
    files = {path: data.decode() for path, data in unpack_files(bytes(version.bundle)).items()}
    # Exactly what `lcp init parts --template crud --field sku:string:required --field count:integer` writes.
    assert files == render("crud", "parts", [Field("sku", "string", True), Field("count", "integer")])
    schema = version.manifest["collections"]["items"]["schema"]
    assert schema["required"] == ["sku"] and set(schema["properties"]) == {"sku", "count"}
    page = client.get(answer["Location"]).content.decode()
    assert "Created parts from the crud template and deployed it as v1 with 5 tools." in page
    assert 'class="warning"' not in page  # no deploy warning either


@pytest.mark.parametrize("template", ["blank", "service"])
def test_the_other_templates_deploy_and_ignore_the_rows(signed_in, acme, template):
    answer = signed_in("admin").post(
        NEW, {"template": template, "name": "demo"} | rows(("x", "string", False))
    )
    assert answer.status_code == 302
    manifest = App.objects.for_tenant(acme).get(name="demo").active_version.manifest
    assert "collections" not in manifest
    assert ("egress" in manifest) is (template == "service")


def test_rows_are_added_and_removed_by_round_trips(signed_in, acme):
    client = signed_in("admin")
    page = client.get(NEW).content.decode()
    assert 'name="field-count" value="3"' in page and 'value="title"' in page  # lcp init's defaults
    posted = {"template": "crud", "name": "parts"} | rows(
        ("sku", "string", True), ("count", "integer", False)
    )
    added = client.post(NEW, posted | {"action": "add"}).content.decode()
    assert 'name="field-count" value="3"' in added and 'name="field-2-name" value=""' in added
    removed = client.post(NEW, posted | {"action": "remove:1"}).content.decode()
    assert 'name="field-count" value="1"' in removed and 'name="field-0-name" value="count"' in removed
    assert 'value="parts"' in removed  # the name typed stays
    assert not App.objects.for_tenant(acme).exists()


def test_bad_names_and_fields_are_refused_at_their_row_and_nothing_is_deployed(signed_in, acme):
    client = signed_in("admin")
    bad = rows(
        ("Sku", "string", True), ("id", "integer", False), ("price", "money", False), ("", "text", False)
    )
    answer = client.post(NEW, {"template": "crud", "name": "parts", "action": "create"} | bad)
    body = answer.content.decode()
    assert answer.status_code == 422 and "Not created: 4 problems" in body
    assert "Field 1: &#x27;Sku&#x27; is not a field name" in body
    assert "Field 2: &#x27;id&#x27; is the template&#x27;s own" in body
    assert "Field 3: &#x27;money&#x27; is not a field type" in body
    assert "Field 4: give the field a name, or remove it" in body
    named = client.post(
        NEW, {"template": "crud", "name": "Parts!", "action": "create"} | rows(("a", "text", 0))
    )
    assert named.status_code == 422 and "is not an app name" in named.content.decode()
    assert not App.objects.for_tenant(acme).exists()


def test_an_existing_app_is_not_overwritten(signed_in, acme, deploy):
    deploy(acme)  # the cases app
    answer = signed_in("admin").post(NEW, {"template": "blank", "name": "cases", "action": "create"})
    assert answer.status_code == 422 and "an app named cases exists" in answer.content.decode()
    assert App.objects.for_tenant(acme).get(name="cases").active_version.number == 1


def test_members_get_no_new_app_page_and_csrf_holds(signed_in, acme):
    assert signed_in("writer").get(NEW).status_code == 404
    assert signed_in("writer").post(NEW, {"template": "blank", "name": "x"}).status_code == 404
    assert signed_in("admin", csrf=True).post(NEW, {"template": "blank", "name": "x"}).status_code == 403
    assert not App.objects.for_tenant(acme).exists()
