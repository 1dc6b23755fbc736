"""Which isolation tier does this host give the handler sandbox?

    python -m apps_runtime.sandbox [--bundle-root DIR] [--min-tier N] [--tier N] [--python PATH]

Probes the tiers the way the platform does at start-up, prints the tier it would run at and why each
stronger tier is unavailable, and exits with status 1 if nothing at least as strong as --min-tier works.
Run it as the user the platform runs as (root, or the service user), with the same bundle root.
"""

import argparse
import sys

from . import Sandbox, SandboxUnavailable


def main(argv: list[str] | None = None) -> int:
    summary = __doc__.split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m apps_runtime.sandbox", description=summary)
    parser.add_argument("--bundle-root", help="settings.SANDBOX_BUNDLE_DIR (tier 1 needs it)")
    parser.add_argument("--min-tier", default="3", help="weakest tier accepted (1, 2, 3 or a name)")
    parser.add_argument("--tier", help="probe only this tier")
    parser.add_argument("--python", default=sys.executable, help="interpreter the zygote runs")
    args = parser.parse_args(argv)

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
        return 0
    finally:
        box.close()


if __name__ == "__main__":
    sys.exit(main())
