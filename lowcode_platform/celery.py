"""The Celery app: configured from Django settings (CELERY_*), tasks found in each package."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowcode_platform.settings")

app = Celery("lowcode_platform")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
