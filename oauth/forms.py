"""The consent form: the toolkit's hidden authorization-request fields, plus the read-only choice."""

from django import forms
from oauth2_provider.forms import AllowForm


class ConsentForm(AllowForm):
    read_only = forms.BooleanField(
        required=False,
        label="Read-only: this connection may only use tools marked read-only",
    )
    # The request the page was shown for, signed (``oauth.consent.shown_request``): the hidden
    # fields come back from the browser, and only what was shown may be granted.
    shown = forms.CharField(required=False, widget=forms.HiddenInput())
