"""Where a screen's document is served on the front-end path, and the signed link that opens it.

A screen is tenant code. On the front-end path the platform answers a host page of its own
(``mcp_gateway/screen_host``) that frames the screen's document: sandboxed to an opaque origin, or
served from ``SCREENS_ORIGIN`` (another site) when the operator sets one. Either way the document is
served without the visitor's session (an opaque origin's requests, and another site's, carry none of
the platform's cookies), so the host page, which did check who the visitor is, signs its decision
into the document's URL: a ``ScreenGrant`` for one screen of one app version, good for a few minutes,
with the wire names of the tools that visitor may call (what the view reads from its ``lcp-app`` block).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core import signing

from core.origin import public_origin

SALT = "apps_runtime.screen_documents"
# The frame's sandbox: scripts run, in an origin of their own (no allow-same-origin), with no forms,
# popups, top navigation or downloads. The document's CSP carries the same flags, so opening its URL
# directly sandboxes it too.
SANDBOX_FLAGS = "allow-scripts"


class GrantRefused(Exception):
    """A document link that is forged, expired, or for another screen."""


@dataclass(frozen=True)
class ScreenGrant:
    """The host page's word that its visitor may open ``screen`` of ``app`` at ``version``."""

    tenant: str
    app: str
    screen: str
    version: int
    tools: dict[str, str]  # the app's tools the visitor may call: manifest name -> wire name

    def sign(self) -> str:
        payload = [self.tenant, self.app, self.screen, self.version, self.tools]
        return signing.dumps(payload, salt=SALT, compress=True)

    @classmethod
    def read(cls, signed: str, *, tenant: str, app: str, screen: str) -> ScreenGrant:
        """The grant ``signed`` carries, if it is the platform's, recent, and for this screen.

        Raises:
            GrantRefused: anything else.
        """
        try:
            payload = signing.loads(signed, salt=SALT, max_age=settings.SCREENS_GRANT_SECONDS)
            grant = cls(*payload)
        except (signing.BadSignature, TypeError, ValueError) as err:
            raise GrantRefused(
                "this link to the screen is not valid or has expired: open the screen again"
            ) from err
        if (grant.tenant, grant.app, grant.screen) != (tenant, app, screen):
            raise GrantRefused("this link is for another screen")
        return grant


def platform_origin_of(scheme: str, host: str) -> str:
    """The origin of the platform's own pages (the host page): ``PUBLIC_BASE_URL``, else the request's."""
    return public_origin(scheme, host) or f"{scheme}://{host}"


def document_origin(scheme: str, host: str) -> str:
    """Where screens' documents are served: ``SCREENS_ORIGIN``, else the platform's own origin."""
    return settings.SCREENS_ORIGIN or platform_origin_of(scheme, host)


def document_path(tenant: str, app: str, screen: str) -> str:
    return f"/t/{tenant}/apps/{app}/_screens/{screen}/document"


def site_of(url: str) -> str:
    """The site of an origin for cookies: its registrable domain (public suffix + one label, from the
    bundled Public Suffix List), or the host itself for an IP address or a name with no known suffix.
    Cookies are shared within a site, never across two."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    from publicsuffixlist import PublicSuffixList  # the list loads on first use: system checks only

    return PublicSuffixList().privatesuffix(host) or host
