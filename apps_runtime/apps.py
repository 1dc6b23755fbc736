from django.apps import AppConfig


class AppsRuntimeConfig(AppConfig):
    name = "apps_runtime"
