"""The gateware reads in small pieces and uses only Amaranth's public interface."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The longest function allowed in ``hdl/``, in lines (its docstring included).
LONGEST = 80


def test_no_function_in_hdl_is_longer_than_80_lines():
    long = []
    for path in sorted((ROOT / "hdl").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines})")
    assert not long, long


def test_no_private_amaranth_attribute():
    # Name-mangled private attributes of Amaranth's classes (e.g. MustUse's) and its
    # underscore modules.
    private = re.compile(r"_MustUse__|_[A-Z]\w*__\w+|amaranth\.(hdl\.)?_\w+")
    found = []
    for folder in ("hdl", "gen", "sim_tb", "boards", "model", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if private.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, found
