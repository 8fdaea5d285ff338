"""The package's modules import one another without a cycle, counting the imports inside
functions too (a cycle there still ties two modules together: each needs the other loaded)."""

import ast
from pathlib import Path

from package import imported, modules


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that module ``name`` (at ``path``) imports, anywhere in it."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        found |= imported(node, package)
    return {each for each in found if each in known and each != name}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (module → modules it imports), or None (a depth-first search)."""
    state, trail = {}, []

    def visit(node):
        state[node] = "open"
        trail.append(node)
        for other in sorted(graph[node]):
            if state.get(other) == "open":
                return trail[trail.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        state[node] = "done"
        trail.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_search_finds_a_planted_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_the_package():
    known = modules()
    assert {"twinnet.cli.main", "twinnet.cli.gen_cmd", "twinnet.model.schema"} <= set(known)
    graph = {name: imports(name, path, set(known)) for name, path in known.items()}
    assert "twinnet.cli.parser" in graph["twinnet.cli.gen_cmd"]
    assert cycle(graph) is None, " -> ".join(cycle(graph))
