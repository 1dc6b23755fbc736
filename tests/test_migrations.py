"""The migrations describe the models exactly: the suite's own test databases are built from the models
(tests/conftest.py), the platform's from the migrations."""

from __future__ import annotations

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_the_models_have_no_change_without_a_migration(capsys):
    try:
        call_command("makemigrations", "--check", "--dry-run", verbosity=1)
    except SystemExit as missing:
        pytest.fail(f"makemigrations would write migrations:\n{capsys.readouterr().out}\n({missing})")
