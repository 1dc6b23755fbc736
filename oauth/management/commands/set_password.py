import sys
from typing import Any

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Set a user's password, read as one line from standard input (for scripts)."
    stealth_options = ("stdin",)  # tests pass a stream; the command line reads the real stdin

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("user", help="username")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"unknown user '{options['user']}'")
        password = (options.get("stdin") or sys.stdin).readline().rstrip("\r\n")
        if not password:
            raise CommandError("no password on standard input")
        try:
            password_validation.validate_password(password, user)
        except ValidationError as err:
            raise CommandError("; ".join(err.messages)) from err
        user.set_password(password)
        user.save(update_fields=["password"])
        self.stdout.write(f"password set for {user.get_username()}")
