"""Reading input files and writing output folders safely.

- :func:`read_toml` reads a TOML file and turns every way it can fail (missing, a folder, not
  UTF-8, not TOML, unreadable) into one :class:`UsageError` naming the flag and the file.
- :func:`target` checks, before anything is built, that an output folder can be created;
  :func:`file` that an output file can be written.
- :func:`staged` builds a folder under a temporary name beside its final place and publishes it
  whole when the work succeeds, so a failure or an interruption never leaves a partial folder.
  Files whose content did not change keep their old modification time, so that tools that
  compare time stamps (make, Verilator) see an unchanged input as unchanged.
  :func:`replace_file` writes one file likewise: whole or not at all.
"""

import contextlib
import os
import shutil
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

from twinnet.errors import UsageError


def read_toml(path: Path, flag: str) -> dict:
    """The keys of TOML file ``path`` given by ``flag`` (e.g. ``--toml``)."""
    where = f"{flag} {path}"
    if not path.exists():
        raise UsageError(f"{where}: no such file (give a TOML file)")
    if path.is_dir():
        raise UsageError(f"{where}: is a folder, not a TOML file")
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise UsageError(f"{where}: cannot be read ({error.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{where}: is not UTF-8 text (bad byte at offset {error.start}); a "
                         "TOML file must be UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{where}: is not valid TOML ({error})") from None


def target(parent: Path, name: str, flag: str) -> Path:
    """``parent / name``, once it is sure that folder can be created or replaced.

    Raises :class:`UsageError` naming ``flag`` when ``parent`` or one of its ancestors is a
    file, when ``parent / name`` is a file, or when the nearest existing ancestor cannot be
    written.
    """
    final = parent / name
    if final.exists() and not final.is_dir():
        raise UsageError(f"{flag} {parent}: {final} is a file, not a folder (give a folder)")
    if final.is_dir() and not os.access(final, os.W_OK | os.X_OK):
        # Replacing it moves it aside, and moving a folder needs write permission on it.
        raise UsageError(f"{flag} {parent}: cannot replace {final} (permission denied; give "
                         "a writable folder or remove it)")
    folder(parent, flag)
    return final


def folder(path: Path, flag: str) -> Path:
    """``path``, a folder to write in (made when missing), once it is sure it can be: raises
    :class:`UsageError` naming ``flag`` when ``path`` or one of its ancestors is a file or the
    nearest existing one cannot be written."""
    for ancestor in [path, *path.parents]:
        if ancestor.exists() or ancestor.is_symlink():
            if not ancestor.is_dir():
                what = "names a file" if ancestor == path else "lies under a file"
                raise UsageError(f"{flag} {path}: {ancestor} is a file, not a folder; "
                                 f"{flag} {what} (give a folder)")
            if not os.access(ancestor, os.W_OK | os.X_OK):
                raise UsageError(f"{flag} {path}: cannot write in {ancestor} (permission "
                                 "denied; give a writable folder)")
            break
    _probe(path, flag)
    return path


def _probe(parent: Path, flag: str) -> None:
    """Create the missing folders up to ``parent`` and remove them again: some folders
    (``/proc``, full or read-only file systems) refuse what their permissions allow."""
    missing = [folder for folder in [parent, *parent.parents] if not folder.exists()]
    try:
        for folder in reversed(missing):
            folder.mkdir()
        probe = Path(tempfile.mkdtemp(prefix=".twinnet-probe.", dir=parent))
        probe.rmdir()
    except OSError as error:
        raise UsageError(f"{flag} {parent}: cannot create a folder there "
                         f"({error.strerror or error}); give a writable folder") from None
    finally:
        for folder in missing:
            with contextlib.suppress(OSError):
                folder.rmdir()


def file(value, flag: str, suffixes: tuple[str, ...] = ()) -> Path:
    """The output file ``value`` of option ``flag``, checked before anything is built: one of
    ``suffixes`` by its name (when given), not a folder, in a folder this can write in."""
    out = Path(value)
    if suffixes and out.suffix.lower() not in suffixes:
        raise UsageError(f"{flag} {value}: must end with {' or '.join(suffixes)}")
    if out.is_dir():
        raise UsageError(f"{flag} {value}: is a folder; give a file name"
                         + (f" ending with {' or '.join(suffixes)}" if suffixes else ""))
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {value}: {parent} is not a folder this can write in")
    return out


def replace_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` under a temporary name beside it, then rename it into
    place: an interruption leaves the old file (or none), never half of the new one."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(handle, "w", newline="") as stream:
            stream.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes it private
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def staged(final: Path) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``final``; publish it as ``final`` on success.

    On an exception (or an interruption) the temporary folder and any parent folders created
    for it are removed and ``final`` is left as it was. On success, files identical to those
    already in ``final`` keep their old copies (and time stamps), then the new folder takes
    ``final``'s place; the old folder goes only once the new one is in place.
    """
    final = Path(final)
    created = [folder for folder in [final.parent, *final.parent.parents]
               if not folder.exists()]
    final.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    umask = os.umask(0)
    os.umask(umask)
    stage.chmod(0o777 & ~umask)  # mkdtemp makes it private; the result is an ordinary folder
    try:
        yield stage
        if final.is_dir():
            _keep_unchanged(final, stage)
            old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old.", dir=final.parent))
            final.rename(old / final.name)
            stage.rename(final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            stage.rename(final)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        for folder in created:  # nearest first: each is empty once its child is gone
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _keep_unchanged(old: Path, new: Path) -> None:
    """Move each file of ``old`` that ``new`` holds with the same bytes into ``new``."""
    for path in new.rglob("*"):
        if path.is_file():
            previous = old / path.relative_to(new)
            if previous.is_file() and previous.read_bytes() == path.read_bytes():
                os.replace(previous, path)

