"""The app manifest: its JSON Schema, the bundle reader and the deploy validator."""

from apps_runtime.manifest.bundle import (
    Bundle,
    bundle_from_mapping,
    read_bundle,
    read_bundle_bytes,
    read_bundle_upload,
)
from apps_runtime.manifest.problems import BundleTooLarge, DeployRejected, Problem
from apps_runtime.manifest.schema import MANIFEST_SCHEMA
from apps_runtime.manifest.validator import validate_manifest

__all__ = [
    "MANIFEST_SCHEMA",
    "Bundle",
    "BundleTooLarge",
    "DeployRejected",
    "Problem",
    "bundle_from_mapping",
    "read_bundle",
    "read_bundle_bytes",
    "read_bundle_upload",
    "validate_manifest",
]
