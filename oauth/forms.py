"""The consent form: the toolkit's hidden authorization-request fields, plus the read-only choice."""

from django import forms
from oauth2_provider.forms import AllowForm


class ConsentForm(AllowForm):
    read_only = forms.BooleanField(
        required=False,
        label="Read-only: this connection may only use tools marked read-only",
    )
