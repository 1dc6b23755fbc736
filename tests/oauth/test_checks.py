"""System checks of the OAuth settings."""

from io import StringIO

from django.core.checks import run_checks
from django.core.management import call_command


def _ids(*, deploy: bool = True) -> set[str]:
    messages = run_checks(include_deployment_checks=deploy)
    return {message.id for message in messages if message.id.startswith("oauth.")}


def test_a_production_configuration_without_public_base_url_is_warned_by_check_deploy(settings):
    settings.DEBUG, settings.PUBLIC_BASE_URL = False, ""
    assert "oauth.W001" in _ids()


def test_other_commands_do_not_repeat_the_public_base_url_warning(settings):
    settings.DEBUG, settings.PUBLIC_BASE_URL = False, ""
    assert "oauth.W001" not in _ids(deploy=False)
    err = StringIO()
    call_command("check", stdout=StringIO(), stderr=err)
    assert "oauth.W001" not in err.getvalue()


def test_an_http_public_origin_outside_debug_is_warned_by_check_deploy(settings):
    settings.DEBUG, settings.PUBLIC_BASE_URL = False, "http://platform.example"
    assert _ids() == {"oauth.W002"}
    assert not _ids(deploy=False)


def test_public_base_url_must_be_an_origin(settings):
    settings.PUBLIC_BASE_URL = "https://platform.example/path"
    assert "oauth.E001" in _ids(deploy=False)
    settings.PUBLIC_BASE_URL = "https://platform.example"
    assert not _ids()
