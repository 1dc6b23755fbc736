"""Which isolation tier does this host give the handler sandbox?

    python -m apps_runtime.sandbox [--bundle-root DIR] [--min-tier N] [--tier N] [--python PATH]

Probes the tiers the way the platform does at start-up, prints the tier it would run at and why each
stronger tier is unavailable (with a loud warning at tier 3), how calls are bounded, and exits with status 1
if nothing at least as strong as --min-tier works.
Run it as the user the platform runs as (root, or the service user), with the same bundle root.
"""

import argparse
import logging
import sys

from . import Sandbox, SandboxUnavailable
from .tiers import RLIMITS

TIER_3_BANNER = """
************************************************************************************************
  WARNING: handlers would run at tier 3 (rlimits), the weakest isolation tier.
  A handler could read world-readable files, connect to TCP services on this host (databases,
  caches, this platform) and write outside its scratch dir. Install bubblewrap (tier 1) or use a
  kernel with Landlock (tier 2); set SANDBOX_MIN_TIER=2 to refuse to start below them.
************************************************************************************************"""


def main(argv: list[str] | None = None) -> int:
    summary = __doc__.split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m apps_runtime.sandbox", description=summary)
    parser.add_argument("--bundle-root", help="settings.SANDBOX_BUNDLE_DIR (tier 1 needs it)")
    parser.add_argument("--min-tier", default="3", help="weakest tier accepted (1, 2, 3 or a name)")
    parser.add_argument("--tier", help="probe only this tier")
    parser.add_argument("--python", default=sys.executable, help="interpreter the zygote runs")
    args = parser.parse_args(argv)

    # What the probe logs, this command prints (no logging configured here: keep Python's last resort quiet).
    logging.getLogger("apps_runtime.sandbox").addHandler(logging.NullHandler())
    box = Sandbox(bundle_root=args.bundle_root, min_tier=args.min_tier, tier=args.tier, python=args.python)
    try:
        try:
            level = box.tier_level
        except SandboxUnavailable as exc:
            print(f"UNAVAILABLE: {exc}")
            return 1
        print(f"tier {level} ({box.tier})")
        for label, reason in box.tier_report.items():
            print(f"  {label}: {reason}")
        scratch = box.scratch_bytes_per_call
        print(f"  scratch space per call: {f'{scratch >> 20} MiB' if scratch else 'bounded per file only'}")
        if level == RLIMITS:
            print(TIER_3_BANNER, file=sys.stderr)
        return 0
    finally:
        box.close()


if __name__ == "__main__":
    sys.exit(main())
