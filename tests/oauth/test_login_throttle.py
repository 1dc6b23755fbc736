"""Wrong passwords at /accounts/login/ are throttled per (address, username) pair, per address, and
per username under a generous ceiling (issue 26 item 9; issue 35: one address cannot lock a user out)."""

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


def test_ten_wrong_passwords_from_one_address_throttle_it_but_not_the_user_elsewhere(user):
    # The defaults: the attacker's address A runs out, the user's address B does not.
    wrong = [_login(Client(), user, "guess", "203.0.113.7").status_code for _ in range(10)]
    assert wrong == [200] * 10  # the form again, with its error
    throttled = _login(Client(), user, "right horse battery", "203.0.113.7")  # even the right one, from A
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) >= 1
    assert "Too many failed sign-ins" in throttled.content.decode()
    assert _login(Client(), user, "guess", "203.0.113.7").status_code == 429
    signed_in = _login(Client(), user, "right horse battery", "198.51.100.9")
    assert signed_in.status_code == 302  # the right password from B still signs in
    assert _login(Client(), user, "guess", "198.51.100.9").status_code == 200  # B's own count is its own


def test_wrong_passwords_for_one_username_from_many_addresses_meet_its_ceiling(user, settings):
    settings.LOGIN_FAILURES_PER_USERNAME = 3
    wrong = [_login(Client(), user, "guess", f"203.0.113.{n}").status_code for n in range(3)]
    assert wrong == [200] * 3
    throttled = _login(Client(), user, "right horse battery", "198.51.100.9")  # even the right one
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) >= 1
    _set_password("writer", "another good one")
    assert _login(Client(), "writer", "another good one").status_code == 302  # another user signs in


def test_wrong_passwords_from_one_address_are_throttled(acme, settings):
    settings.LOGIN_FAILURES_PER_SOURCE = 4
    for n in range(4):
        assert _login(Client(), f"nobody{n}", "guess", "203.0.113.5").status_code == 200
    assert _login(Client(), "nobody9", "guess", "203.0.113.5").status_code == 429
    assert _login(Client(), "nobody9", "guess", "203.0.113.6").status_code == 200
