"""twinnet's packages form layers: each imports only the packages below it, lazy imports (inside
functions) included, so that no two packages import each other.

From the bottom: the reference model (no Amaranth), the gateware, the family registry, the
generators, the simulation glue, the boards, the command line. The imports are read from the
source with :mod:`ast`, so an import inside a function counts as much as one at the top.
"""

import ast

import pytest
from package import imported, modules

#: The layers, bottom first.
LAYERS = ("model", "hdl", "families", "gen", "sim_tb", "boards", "cli")


def imported_packages(package: str) -> dict[str, set[str]]:
    """Every twinnet layer (and ``amaranth``) that a module of ``twinnet.<package>`` imports:
    layer → the modules (dotted names) that import it."""
    found: dict[str, set[str]] = {}
    for name, path in modules().items():
        if name != f"twinnet.{package}" and not name.startswith(f"twinnet.{package}."):
            continue
        owner = name if path.stem == "__init__" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for target in imported(node, owner):
                words = target.split(".")
                if words[0] == "twinnet" and len(words) > 1 and words[1] in LAYERS:
                    found.setdefault(words[1], set()).add(name)
                elif words[0] == "amaranth":
                    found.setdefault("amaranth", set()).add(name)
    return found


@pytest.mark.parametrize("package", LAYERS)
def test_a_package_imports_only_the_layers_below_it(package):
    below = set(LAYERS[:LAYERS.index(package)])
    upward = {other: sorted(modules) for other, modules in imported_packages(package).items()
              if other in LAYERS and other != package and other not in below}
    assert not upward, f"twinnet.{package} imports layers above it: {upward}"


def test_the_model_and_the_registry_need_no_amaranth():
    """The reference model and the families' model parts are pure Python (a family's hardware
    part lives in its own module, imported by name only when generating)."""
    for package in ("model", "families"):
        assert "amaranth" not in imported_packages(package), package


def test_the_reader_sees_lazy_and_relative_imports():
    """The check can fail: it finds the CLI's relative imports of its own modules and a
    lazy import of the simulation glue inside a function."""
    cli = imported_packages("cli")
    assert "cli" in cli and "sim_tb" in cli
    assert any("sim_cmd" in module for module in cli["sim_tb"])
