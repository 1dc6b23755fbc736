"""Issue 26 item 9: wrong passwords at /accounts/login/ are throttled per username and per address."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


def _set_password(username: str, password: str) -> None:
    account = get_user_model().objects.get(username=username)
    account.set_password(password)
    account.save(update_fields=["password"])


@pytest.fixture
def user(acme):
    _set_password("reader", "right horse battery")
    return "reader"


def _login(client: Client, username: str, password: str, address: str = "127.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_wrong_passwords_for_one_username_are_throttled(user, settings):
    settings.LOGIN_FAILURES_PER_USERNAME = 3
    wrong = [_login(Client(), user, "guess").status_code for _ in range(3)]
    assert wrong == [200] * 3  # the form again, with its error
    throttled = _login(Client(), user, "right horse battery", "198.51.100.9")  # even the right one
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) >= 1
    assert "Too many failed sign-ins" in throttled.content.decode()
    _set_password("writer", "another good one")
    assert _login(Client(), "writer", "another good one").status_code == 302  # another user signs in


def test_wrong_passwords_from_one_address_are_throttled(acme, settings):
    settings.LOGIN_FAILURES_PER_SOURCE = 4
    for n in range(4):
        assert _login(Client(), f"nobody{n}", "guess", "203.0.113.5").status_code == 200
    assert _login(Client(), "nobody9", "guess", "203.0.113.5").status_code == 429
    assert _login(Client(), "nobody9", "guess", "203.0.113.6").status_code == 200
