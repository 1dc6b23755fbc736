"""``manage.py purge_expired``: what beat runs every hour, for hosts without beat (or cron)."""

import json

from django.core.management.base import BaseCommand

from mcp_gateway.retention import purge_expired


class Command(BaseCommand):
    help = (
        "Delete handler error records, finished job runs and audit rows past their retention period "
        "(RETENTION_*_DAYS) or over their tenant's cap (RETENTION_*_PER_TENANT), and OAuth clients "
        "that registered and never completed a grant (OAUTH_UNUSED_CLIENT_HOURS). Prints the counts."
    )

    def handle(self, *args, **options) -> None:
        self.stdout.write(json.dumps(purge_expired(), sort_keys=True))
