"""Fair share: at most N handler runs in flight per tenant, so one tenant's slow handlers cannot take every
slot of the machine while the others wait. The gate is the platform's one (``core.tenant_gate``)."""

from core.tenant_gate import TenantGate

__all__ = ["TenantGate"]
