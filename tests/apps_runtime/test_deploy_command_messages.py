"""`manage.py deploy` says what to do when given the wrong path."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps_runtime.models import App

pytestmark = pytest.mark.django_db
CASE_PORTAL = Path(__file__).resolve().parents[2] / "fixtures" / "apps" / "case_portal"


def test_deploying_the_manifest_file_says_to_pass_the_folder_that_holds_it(make_tenant):
    tenant = make_tenant("acme")
    out = StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("deploy", "acme", str(CASE_PORTAL / "app.json"), stdout=out)
    assert out.getvalue().splitlines() == [
        f"/: '{CASE_PORTAL / 'app.json'}' is not a .zip archive: pass '{CASE_PORTAL}' "
        "(the folder that holds app.json) or a .zip of it"
    ]
    assert not App.objects.for_tenant(tenant).exists()


def test_deploying_any_other_file_that_is_not_a_zip_names_the_bundle_folder(make_tenant, tmp_path):
    make_tenant("acme")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a bundle")
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("deploy", "acme", str(notes), stdout=out)
    assert "pass the bundle folder (the folder that holds app.json) or a .zip of it" in out.getvalue()
