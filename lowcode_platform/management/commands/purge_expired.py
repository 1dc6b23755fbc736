"""``manage.py purge_expired``: what beat runs every hour, for hosts without beat (or cron)."""

import json

from django.core.management.base import BaseCommand

from core.retention import purge_all


class Command(BaseCommand):
    help = (
        "Delete handler error records, finished job runs, audit rows and finished agent runs past "
        "their retention period (RETENTION_*_DAYS) or over their tenant's cap (RETENTION_*_PER_TENANT), "
        "and OAuth clients that registered and never completed a grant (OAUTH_UNUSED_CLIENT_HOURS): "
        "every purge an app registered (core.retention). Prints the counts."
    )

    def handle(self, *args, **options) -> None:
        self.stdout.write(json.dumps(purge_all(), sort_keys=True))
