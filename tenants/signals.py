"""Signals other packages listen to without tenants importing them."""

from django.dispatch import Signal

# Sent on commit when something that shapes a tenant's catalogs changed (settings, members,
# apps). Arguments: tenant_id.
tenant_changed = Signal()
