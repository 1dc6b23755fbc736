"""Deploy checks of what an app's handlers may reach: ``egress`` entries and ``connections`` providers.

The schema checks shapes; these say what is wrong with an entry, with its pointer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings

from apps_runtime.egress.rules import BadEntry, parse_rule
from apps_runtime.manifest.problems import Problem, pointer


def egress_problems(manifest: Any) -> Iterator[Problem]:
    """A problem for each ``egress`` entry that is no destination and each unknown provider."""
    entries = manifest.get("egress") if isinstance(manifest, dict) else None
    for index, entry in enumerate(entries if isinstance(entries, list) else ()):
        if isinstance(entry, str):
            try:
                parse_rule(entry)
            except BadEntry as err:
                yield Problem(pointer("egress", index), str(err))
    declared = manifest.get("connections") if isinstance(manifest, dict) else None
    providers = settings.OUTBOUND_OAUTH_PROVIDERS or {}
    for name, spec in (declared or {}).items() if isinstance(declared, dict) else ():
        provider = spec.get("provider") if isinstance(spec, dict) else None
        if isinstance(provider, str) and provider not in providers:
            known = ", ".join(sorted(providers)) or "none are configured"
            yield Problem(
                pointer("connections", name, "provider"),
                f"provider {provider!r} is not one of this platform's OUTBOUND_OAUTH_PROVIDERS ({known})",
            )
