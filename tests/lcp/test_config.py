"""The stored login: its place (LCP_CONFIG_DIR), its mode, and what a damaged file says."""

from __future__ import annotations

import stat

import pytest

from lcp.config import Login, load_login, save_login
from lcp.exceptions import LcpError, NotLoggedIn


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LCP_CONFIG_DIR", str(tmp_path / "lcp"))
    return tmp_path / "lcp"


def test_a_login_is_saved_for_its_owner_only_even_over_a_wider_file(config_dir):
    config_dir.mkdir()
    (config_dir / "config.json").write_text("{}")
    (config_dir / "config.json").chmod(0o644)
    path = save_login(Login("https://p.example", "acme", "lcp_x_y"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_login() == Login("https://p.example", "acme", "lcp_x_y")


def test_no_file_is_not_logged_in_and_a_damaged_one_says_to_log_in_again(config_dir):
    with pytest.raises(NotLoggedIn):
        load_login()
    config_dir.mkdir()
    (config_dir / "config.json").write_text('{"url": "x"')
    with pytest.raises(LcpError, match="run `lcp login` again"):
        load_login()
