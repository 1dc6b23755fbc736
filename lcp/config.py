"""The stored login: platform URL, tenant and token, in the user's config directory, mode 0600.

``LCP_CONFIG_DIR`` puts it elsewhere (tests, several platforms side by side).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import platformdirs

from lcp.exceptions import LcpError, NotLoggedIn

CONFIG_DIR_VARIABLE = "LCP_CONFIG_DIR"
FILE_NAME = "config.json"


@dataclass(frozen=True)
class Login:
    url: str  # the platform's origin, no trailing slash
    tenant: str
    token: str


def config_path() -> Path:
    """Where the login is stored: ``$LCP_CONFIG_DIR/config.json`` or the platform's user config dir."""
    folder = os.environ.get(CONFIG_DIR_VARIABLE) or platformdirs.user_config_dir("lcp", appauthor=False)
    return Path(folder) / FILE_NAME


def save_login(login: Login) -> Path:
    """Store ``login`` readable by its owner only (the file holds a bearer token)."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        json.dump(asdict(login), out, indent=2)
    os.chmod(path, 0o600)  # an existing file keeps its mode through os.open: set it again
    return path


def load_login() -> Login:
    """The stored login.

    Raises:
        NotLoggedIn: nothing stored yet.
        LcpError: the file is not a login ``lcp login`` wrote.
    """
    path = config_path()
    try:
        data = json.loads(path.read_text())
        return Login(url=data["url"], tenant=data["tenant"], token=data["token"])
    except FileNotFoundError:
        raise NotLoggedIn() from None
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise LcpError(f"cannot read {path} ({err.__class__.__name__}): run `lcp login` again") from None
