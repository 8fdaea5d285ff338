"""The package's modules and their imports, read from the source (for the tests of its
shape: no import cycle, no shared module naming a family)."""

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def modules() -> dict[str, Path]:
    """Every module of the package, by its dotted name, from pyproject.toml's folders."""
    folders = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"]
    return {(package if path.stem == "__init__" else f"{package}.{path.stem}"): path
            for package, folder in folders.items() for path in (ROOT / folder).glob("*.py")}


def imported(node: ast.AST, package: str) -> set[str]:
    """The dotted names an import statement ``node`` in a module of ``package`` may load:
    each module, package and (for ``from … import name``) ``package.name``; empty for any
    other node. ``from . import name`` loads ``name`` alone: its package is the one being
    loaded already."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        parts = package.split(".")[:len(package.split(".")) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    named = {f"{base}.{alias.name}" for alias in node.names}
    return named if node.level and not node.module else {base, *named}
