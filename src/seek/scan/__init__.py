"""Which files to index: allowlist, ignore rules, size limits, skip reasons."""

from seek.scan.allowlist import is_indexable_name
from seek.scan.walk import ScannedFile, ScanResult, scan_workspace

__all__ = ["ScanResult", "ScannedFile", "is_indexable_name", "scan_workspace"]
