"""Connect to a tenant's MCP endpoint with OAuth, as claude.ai or an IDE does: no token to paste.

Run it from the checkout, with the platform running (``make demo``) and a password set for the
person who will sign in (``manage.py set_password reader``):

    .venv/bin/python examples/oauth_client.py [--url http://127.0.0.1:8000/t/acme/mcp]

The official SDK's ``OAuthClientProvider`` finds the platform's authorization server from the
endpoint's 401, registers this script (dynamic registration), and sends the browser to sign in and
consent; the platform redirects back to a port this script listens on (``http://127.0.0.1:<port>/
callback``, as native apps do, RFC 8252), and the SDK trades the code for tokens (PKCE). Then it
lists the tools the connection sees. Tokens are kept in memory only: the next run asks again.
"""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from anyio.abc import SocketAttribute, SocketStream
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

DEMO_URL = f"http://127.0.0.1:{os.environ.get('PORT') or 8000}/t/acme/mcp"
SIGN_IN_SECONDS = 300  # how long the person has to sign in and answer the consent page


class MemoryStorage:
    """The SDK's token storage, in memory (a real client keeps them in its keychain)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class LoopbackCallback:
    """Serves 127.0.0.1 until the one redirect that brings the authorization code back arrives."""

    def __init__(self, listener) -> None:
        self.listener = listener
        self.port = listener.extra(SocketAttribute.local_port)
        self.redirect_uri = f"http://127.0.0.1:{self.port}/callback"
        self._arrived = anyio.Event()
        self._query: dict[str, str] = {}

    async def serve(self) -> None:
        """Answer requests until /callback came (run it in a task while the browser signs in)."""
        while not self._arrived.is_set():
            stream: SocketStream = await self.listener.accept()
            async with stream:
                request = await stream.receive(65536)
                target = (
                    request.split(b" ", 2)[1].decode("ascii", "replace") if request.count(b" ") > 1 else "/"
                )
                page = b"Signed in: you can close this tab and go back to the terminal."
                await stream.send(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(page), page)
                )
            if urlsplit(target).path == "/callback":
                self._query = {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
                self._arrived.set()

    async def code(self) -> AuthorizationCodeResult:
        """The code and state the redirect brought (the SDK asks once the browser was opened).

        Raises:
            PermissionError: the platform redirected with an error (the person pressed Deny).
            TimeoutError: nobody signed in within SIGN_IN_SECONDS.
        """
        with anyio.fail_after(SIGN_IN_SECONDS):
            await self._arrived.wait()
        if "error" in self._query:
            raise PermissionError(f"the platform answered {self._query['error']} (did you press Deny?)")
        # The issuer (RFC 9207) comes back with the code; the SDK checks it against the one it found.
        return AuthorizationCodeResult(
            code=self._query["code"], state=self._query.get("state"), iss=self._query.get("iss")
        )


async def _open_in_browser(url: str) -> None:
    print(f"Opening your browser to sign in: {url}", file=sys.stderr)
    webbrowser.open(url)


async def list_tools_with_oauth(
    url: str, *, open_browser: Callable[[str], Awaitable[None]] = _open_in_browser
) -> list[str]:
    """Sign in through ``open_browser`` and return the wire names of the tools the connection sees."""
    async with (
        await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0) as listener,
        anyio.create_task_group() as tasks,
    ):
        callback = LoopbackCallback(listener.listeners[0])  # one socket: 127.0.0.1 only
        tasks.start_soon(callback.serve)
        auth = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                client_name="examples/oauth_client.py",
                redirect_uris=[callback.redirect_uri],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="none",
            ),
            storage=MemoryStorage(),
            redirect_handler=open_browser,
            callback_handler=callback.code,
        )
        # A tool may take its route's time limit (up to 30 s); signing in takes the person's time.
        timeout = httpx2.Timeout(30.0, read=SIGN_IN_SECONDS)
        async with httpx2.AsyncClient(auth=auth, timeout=timeout) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                names, cursor = [], None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    names += [tool.name for tool in page.tools]
                    if (cursor := page.next_cursor) is None:
                        break
        tasks.cancel_scope.cancel()  # the callback server, should the code have come some other way
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("MCP_URL", DEMO_URL), help=f"default: {DEMO_URL}")
    args = parser.parse_args()
    names = None
    try:
        names = anyio.run(list_tools_with_oauth, args.url)
    except* PermissionError as refused:
        print(f"error: {refused.exceptions[0]}", file=sys.stderr)
    except* httpx2.TransportError:
        print(f"error: cannot reach {args.url}: is the platform running (make demo)?", file=sys.stderr)
    if names is None:
        return 1
    print(f"{len(names)} tools at {args.url}:")
    for name in names:
        print(f"  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
