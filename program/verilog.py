"""What the C++ traffic program (:mod:`twinnet.program`) reads in the Verilog of its
models, written by Yosys (Amaranth's backend).

:func:`both_edges` is the Verilog the program's models are Verilated from: the same, with every
register taking both edges of the clock, so that flipping the clock input once is one clock
cycle (one evaluation of a model instead of two).

:func:`paths_within_a_cycle` says which input ports of a module reach each output port
without passing a register, :func:`inputs_reaching_outputs` which inputs reach one: the inputs
whose change can change an output within a clock cycle. The program evaluates a model between
clock edges only after such an input changed, and an output such an input reaches may not
drive another rank's region (its value is exchanged once per cycle).

The reading over-approximates, so that no path is missed. Signals are followed whole, except
that a signal assigned in parts with constant bit ranges (``assign x[32] = ...``) is followed
part by part: a constant range read of it depends on the parts it overlaps. Inside an
``always @*`` block, everything assigned depends on every signal the block names (its
conditions included); an ``assign`` makes what it assigns depend on everything it names; an
instance of a module of the same text makes each signal its outputs drive depend on what drives
the inputs that reach that output inside the module (an instance of anything else makes
everything it is connected to depend on everything). Signals assigned in an
``always @(posedge ...)`` block are registers, which no path crosses. A construct this reading
does not know raises :class:`UnreadableVerilog`.
"""

import re
from collections import defaultdict
from typing import NamedTuple

#: A token: an escaped identifier, a sized number, an identifier, a number, a string, an
#: operator of two or three characters, or any other character.
TOKEN = re.compile(r"""\\\S+ | \d*'[sS]?[bBoOdDhH][0-9a-fA-FxXzZ_?]+ | [A-Za-z_$][\w$]* | \d+
                       | "(?:[^"\\]|\\.)*" | === | !== | <<< | >>> | <= | >= | == | != | && | \|\|
                       | << | >> | ~& | ~\| | ~\^ | \^~ | \*\* | \S""", re.VERBOSE)
#: Comments and attributes (``(* init = ... *)``, not the ``(*)`` of ``always @(*)``).
IGNORED = re.compile(r"/\*.*?\*/|\(\*(?!\)).*?\*\)|//[^\n]*", re.DOTALL)
KEYWORDS = frozenset({
    "module", "endmodule", "input", "output", "inout", "wire", "reg", "signed", "assign",
    "always", "initial", "begin", "end", "if", "else", "case", "casez", "casex", "endcase",
    "default", "posedge", "negedge", "or"})
DECLARATIONS = frozenset({"wire", "reg", "integer", "localparam", "parameter"})


class UnreadableVerilog(ValueError):
    """The Verilog holds a construct :func:`inputs_reaching_outputs` does not read."""


class Ref(NamedTuple):
    """A signal named in an expression, with its constant bit range (``low``, ``high``) if it
    has one."""
    name: str
    low: int | None = None
    high: int | None = None


def _signal(token: str) -> str | None:
    """The signal a token names (an escaped name without its backslash), or None."""
    if token.startswith("\\"):
        return token[1:]
    if re.fullmatch(r"[A-Za-z_][\w$]*", token) and token not in KEYWORDS:
        return token
    return None


def _refs(words: list[str]) -> list[Ref]:
    """The signals ``words`` name, each with its constant bit range if it has one."""
    refs, at = [], 0
    while at < len(words):
        name = _signal(words[at])
        at += 1
        if name is None:
            continue
        select = words[at:at + 5]
        if select[:1] == ["["] and select[1:2] and select[1].isdigit():
            if select[2:3] == ["]"]:
                refs.append(Ref(name, int(select[1]), int(select[1])))
                at += 3
                continue
            if select[2:3] == [":"] and select[3].isdigit() and select[4:5] == ["]"]:
                refs.append(Ref(name, int(select[3]), int(select[1])))
                at += 5
                continue
        refs.append(Ref(name))
    return refs


class _Tokens:
    """The tokens of a text, taken one after the other."""

    def __init__(self, text: str):
        self.items = TOKEN.findall(IGNORED.sub(" ", text))
        self.at = 0

    def peek(self) -> str | None:
        return self.items[self.at] if self.at < len(self.items) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or expected is not None and token != expected:
            raise UnreadableVerilog(f"expected {expected or 'more text'}, found {token!r}")
        self.at += 1
        return token

    def until(self, stop: str) -> list[str]:
        """The tokens before the next ``stop`` outside brackets (``stop`` is taken too)."""
        taken, depth = [], 0
        while (token := self.take()) != stop or depth:
            depth += token in ("(", "[", "{")
            depth -= token in (")", "]", "}")
            taken.append(token)
        return taken

    def group(self) -> list[str]:
        """The tokens inside the parentheses that come next."""
        self.take("(")
        return self.until(")")


class _Module:
    """A module's port directions, its combinational assignments (what they assign, what
    they read) and its instances (module name, port → the tokens connected)."""

    def __init__(self, name: str):
        self.name = name
        self.directions: dict[str, str] = {}
        self.assignments: list[tuple[list[Ref], list[Ref]]] = []
        self.instances: list[tuple[str, dict[str, list[str]]]] = []


def _statement(tokens: _Tokens, assigned: list, named: list) -> None:
    """One procedural statement: what it assigns goes to ``assigned``, every signal it names
    (conditions included) to ``named``."""
    token = tokens.take()
    if token == "begin":
        while tokens.peek() != "end":
            _statement(tokens, assigned, named)
        tokens.take("end")
    elif token == "if":
        named += _refs(tokens.group())
        _statement(tokens, assigned, named)
        if tokens.peek() == "else":
            tokens.take()
            _statement(tokens, assigned, named)
    elif token in ("case", "casez", "casex"):
        named += _refs(tokens.group())
        while tokens.peek() != "endcase":
            if tokens.peek() == "default":
                tokens.take()
                if tokens.peek() == ":":
                    tokens.take()
            else:
                named += _refs(tokens.until(":"))
            _statement(tokens, assigned, named)
        tokens.take("endcase")
    elif token != ";":
        tokens.at -= 1
        words = tokens.until(";")
        split = next((i for i, word in enumerate(words) if word in ("=", "<=")), None)
        if split is None:
            raise UnreadableVerilog(f"a statement that assigns nothing: {' '.join(words)}")
        assigned += _refs(words[:split])
        named += _refs(words)


def _always(tokens: _Tokens, module: _Module) -> None:
    """``always @* statement`` (combinational) or ``always @(posedge clk) statement``."""
    tokens.take("@")
    event = [tokens.take()] if tokens.peek() == "*" else tokens.group()
    assigned, named = [], []
    _statement(tokens, assigned, named)
    if event == ["*"]:
        module.assignments.append((assigned, named))
    elif not {"posedge", "negedge"} & set(event):
        raise UnreadableVerilog(f"always @({' '.join(event)}) in {module.name}")


def _instance(tokens: _Tokens, module_name: str, module: _Module) -> None:
    """``module_name name ( .port(expression), ... );``"""
    name = tokens.take()
    if name == "#":
        raise UnreadableVerilog(f"a parameterised instance of {module_name} in {module.name}")
    words, connections = tokens.group(), {}
    tokens.take(";")
    while words:
        if words[0] != "." or len(words) < 4 or words[2] != "(":
            raise UnreadableVerilog(f"a connection of {module_name} {name} not by port name")
        depth, end = 0, 2
        while True:
            depth += words[end] == "("
            depth -= words[end] == ")"
            end += 1
            if not depth:
                break
        connections[_signal(words[1])] = words[3:end - 1]
        words = words[end + (end < len(words) and words[end] == ","):]
    module.instances.append((_signal(module_name), connections))


def _item(tokens: _Tokens, module: _Module) -> None:
    """One item of a module's body."""
    token = tokens.take()
    if token in ("input", "output", "inout"):
        names = {ref.name for ref in _refs(tokens.until(";"))}
        if len(names) != 1:
            raise UnreadableVerilog(f"a port declaration naming {sorted(names)}")
        module.directions[names.pop()] = token
    elif token in DECLARATIONS:
        tokens.until(";")
    elif token == "assign":
        words = tokens.until(";")
        module.assignments.append((_refs(words[:words.index("=")]), _refs(words)))
    elif token == "initial":
        _statement(tokens, [], [])
    elif token == "always":
        _always(tokens, module)
    else:
        _instance(tokens, token, module)


def _modules(text: str) -> dict[str, _Module]:
    tokens, modules = _Tokens(text), {}
    while tokens.peek() is not None:
        tokens.take("module")
        module = _Module(_signal(tokens.take()))
        tokens.group()
        tokens.take(";")
        while tokens.peek() != "endmodule":
            _item(tokens, module)
        tokens.take("endmodule")
        modules[module.name] = module
    return modules


def _instance_assignments(module: _Module, summaries: dict) -> list:
    """The instances of ``module`` as assignments (what each drives, what that depends on),
    given the :func:`_reaching` of the modules of the text."""
    assignments = []
    for module_name, connections in module.instances:
        refs = {port: _refs(words) for port, words in connections.items()}
        if module_name not in summaries:  # (not of this text: everything on everything)
            everything = [ref for found in refs.values() for ref in found]
            assignments.append((everything, everything))
            continue
        for output, inputs in summaries[module_name].items():
            assignments.append((refs.get(output, []),
                                [ref for port in inputs for ref in refs.get(port, [])]))
    return assignments


def _reaching(module: _Module, summaries: dict) -> dict[str, set[str]]:
    """Each output port of ``module`` → the input ports that reach it (``summaries``: the same
    for the modules of the text, those it instantiates included)."""
    assignments = module.assignments + _instance_assignments(module, summaries)
    # A signal assigned in constant ranges is followed part by part; what reads a range
    # depends on the parts it overlaps (and on the signal whole, which holds the rest).
    parts = defaultdict(set)
    for assigned, _ in assignments:
        for ref in assigned:
            if ref.low is not None:
                parts[ref.name].add((ref.low, ref.high))

    def read(ref: Ref) -> list[Ref]:
        return [Ref(ref.name), *(Ref(ref.name, low, high) for low, high in parts[ref.name]
                                 if ref.low is None or low <= ref.high and ref.low <= high)]

    targets = defaultdict(set)  # what each node is read by
    for assigned, named in assignments:
        for source in {node for ref in named for node in read(ref)}:
            targets[source] |= set(assigned)
    outputs = {name for name, way in module.directions.items() if way != "input"}
    reached = {name: set() for name in outputs}
    for port in (name for name, way in module.directions.items() if way != "output"):
        seen, todo = {Ref(port)}, [Ref(port)]
        while todo:
            for target in targets.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        for name in {node.name for node in seen} & outputs:
            reached[name].add(port)
    return reached


def _summaries(modules: dict[str, _Module]) -> dict[str, dict[str, set[str]]]:
    """:func:`_reaching` of every module, those it instantiates first."""
    summaries, busy = {}, set()

    def visit(name: str) -> None:
        if name in summaries:
            return
        if name in busy:
            raise UnreadableVerilog(f"module {name} instantiates itself")
        busy.add(name)
        for child, _ in modules[name].instances:
            if child in modules:
                visit(child)
        summaries[name] = _reaching(modules[name], summaries)

    for name in modules:
        visit(name)
    return summaries


#: A register's event in Verilog written by Yosys for one clock domain named ``clk``, and the
#: same on both edges.
RISING = "always @(posedge clk)"
BOTH = "always @(posedge clk, negedge clk)"


def both_edges(text: str) -> str:
    """``text`` with every ``always @(posedge clk)`` on both edges of ``clk``. Raises
    :class:`UnreadableVerilog` for a block on another event (another clock, an asynchronous
    reset): its registers would not take one edge per cycle."""
    for event in set(re.findall(r"always\s*@\s*(\([^)]*\)|\*)", text)) - {"*", "(*)"}:
        if f"always @{event}" != RISING:
            raise UnreadableVerilog(f"always @{event}: the program's models take registers "
                                    f"of {RISING} only")
    return text.replace(RISING, BOTH)


def paths_within_a_cycle(text: str, top: str) -> dict[str, set[str]]:
    """Each output port of module ``top`` in Verilog ``text`` → the input ports that reach it
    without passing a register (their Verilog names). Raises :class:`UnreadableVerilog` for a
    construct it does not read (see the module docstring)."""
    modules = _modules(text)
    if top not in modules:
        raise UnreadableVerilog(f"no module {top}")
    return _summaries(modules)[top]


def inputs_reaching_outputs(text: str, top: str) -> set[str]:
    """The input ports of module ``top`` in Verilog ``text`` that reach one of its output
    ports without passing a register (:func:`paths_within_a_cycle`)."""
    return set().union(*paths_within_a_cycle(text, top).values())
