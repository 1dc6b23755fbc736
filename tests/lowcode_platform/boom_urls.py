"""The platform's URLs plus one view that fails, to see Django's own 500 path (``handler500``)."""

from django.urls import path

from lowcode_platform.urls import handler500, urlpatterns  # noqa: F401 (Django reads handler500 here)


def boom(request):
    raise RuntimeError("password hunter2 at /srv/host")


urlpatterns = [*urlpatterns, path("boom", boom)]
