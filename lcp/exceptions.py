"""What ``lcp`` tells a user instead of a traceback: one line, and the exit status."""

from __future__ import annotations

import click

FAILED = 1
TOKEN_REFUSED = "the token was refused (invalid, expired or revoked): `lcp login` with a new one"


class LcpError(click.ClickException):
    """A failure the user can act on: printed as ``lcp: <message>``, exit status 1."""

    exit_code = FAILED

    def format_message(self) -> str:
        return self.message

    def show(self, file=None) -> None:
        click.echo(f"lcp: {self.format_message()}", err=True, file=file)


class NotLoggedIn(LcpError):
    """No stored login for this user."""

    def __init__(self) -> None:
        super().__init__("not logged in: run `lcp login URL --tenant T --token TOKEN` first")


class Refused(LcpError):
    """The platform refused a bundle; ``problems`` are its ``<pointer>: <message>`` lines."""

    def __init__(self, what: str, problems: list[str], warnings: list[str]):
        self.problems = problems
        self.warnings = warnings
        count = len(problems)
        super().__init__(f"{what} refused: {count} problem{'s' if count != 1 else ''}")


class NoSuchApi(LcpError):
    """The platform has not this API (an older one): the command can go on without it."""
