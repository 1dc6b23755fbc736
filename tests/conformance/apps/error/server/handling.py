"""test_error_handling: Tests error response handling."""

from platform_sdk import UserError


def handle(request):
    raise UserError("This tool intentionally returns an error for testing")
