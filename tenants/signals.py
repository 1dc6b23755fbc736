"""Signals of tenant changes, for the packages above ``tenants`` that hold grants of their own."""

from django.dispatch import Signal

# Sent inside ``actions.remove_member``'s transaction with ``tenant``, ``user`` and ``acting_user``:
# whatever lets that user act in the tenant (OAuth connections) ends with the membership.
member_removed = Signal()
