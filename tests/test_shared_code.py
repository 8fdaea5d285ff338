"""Shared code names no family: a family is reached through the registry
(:mod:`twinnet.families`) and its contract alone, so that a family from another package gets
everything twinnet's own get.

A family's own modules are those :meth:`twinnet.families.Family.own_modules` lists (its class's,
its hardware part's, its route specification's, its analyses' and :attr:`Family.modules`).
Every other module of the package is shared, and *names a family* when its code (docstrings
aside: they may speak of the families as examples)

- imports one of the family's own modules, or
- writes one of the family's words (its name or an alias, e.g. ``"fat-tree"``, ``"torus"``)
  or one of its modules' names (``"twinnet.cli.analyze_twin"``, or ``"analyze_twin"`` in its
  own package) as a string.

A family's own module may name that family only. The modules are read with :mod:`ast`.
"""

import ast

import pytest
from package import imported, modules

from twinnet.families import families


def owners() -> dict[str, set[str]]:
    """Each family's own module → the families it belongs to."""
    owned: dict[str, set[str]] = {}
    for each in families().values():
        for module in each.own_modules():
            owned.setdefault(module, set()).add(each.name)
    return owned


def words() -> dict[str, str]:
    """Each family's words → the family."""
    return {word: each.name for each in families().values()
            for word in (each.name, *each.aliases)}


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def mentions(source: str, module: str, owned: dict[str, set[str]], words: dict[str, str],
             allowed: set[str] = frozenset(), *, is_package: bool = False) -> list[str]:
    """How the code of ``module`` (its ``source``) names a family other than those in
    ``allowed``: one line per mention."""
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []

    def named(name: str, how: str) -> None:
        for family in sorted(owned.get(name, set()) - allowed):
            found.append(f"{how} {name} (family {family})")

    for node in ast.walk(tree):
        for name in sorted(imported(node, package)):
            named(name, "imports")
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings):
            text = node.value
            if words.get(text) not in (None, *allowed):
                found.append(f"writes {text!r} (family {words[text]})")
            named(text.partition(":")[0], "writes")
            named(f"{package}.{text}", "writes")
    return found


def test_a_planted_mention_is_found():
    """The check can fail: an import of a family's module, a family's word and a family's
    module's name (relative to its package) are each found; the docstring's word is not; the
    family's own module may name it."""
    owned = {"pkg.model.tree": {"tree"}, "pkg.cli.analyze_tree": {"tree"}}
    family_words = {"tree": "tree", "forest": "tree"}
    source = ('"""Draws a tree."""\n'
              "from pkg.model import tree\n"
              "from .analyze_tree import run\n"
              "KIND = {'forest': 1}\n"
              "MODULES = ('analyze_tree',)\n")
    found = mentions(source, "pkg.cli.draw", owned, family_words)
    assert found == ["imports pkg.model.tree (family tree)",
                     "imports pkg.cli.analyze_tree (family tree)",
                     "writes 'forest' (family tree)",
                     "writes pkg.cli.analyze_tree (family tree)"], found
    assert mentions(source, "pkg.cli.draw", owned, family_words, {"tree"}) == []
    assert mentions('"""A tree."""\nx = 1\n', "pkg.cli.draw", owned, family_words) == []


def test_every_own_module_exists():
    """A family's declared modules are modules of the package (a renamed one must be renamed
    in its family too, or the check below would pass by looking for a name no one uses)."""
    known = modules()
    missing = {module for module in owners() if module not in known}
    assert not missing, sorted(missing)


@pytest.mark.parametrize("module", sorted(modules()))
def test_shared_code_names_no_family(module):
    path = modules()[module]
    owned = owners()
    found = mentions(path.read_text(), module, owned, words(), owned.get(module, set()),
                     is_package=path.stem == "__init__")
    assert not found, f"{module}: " + "; ".join(found)
