"""Generate a network of any family, build it on a simulator and run its cocotb tests.

:func:`simulate` is the one path from a network configuration to simulation results, used by
the tests, ``twinnet sim``/``twinnet demo`` and the benchmarks. It generates the Verilog (with
the link trace by default, so every hop is checked against the model), builds it (on Verilator
with each router kind as a hierarchy block where routers share kinds, see
:func:`hierarchy_blocks`), runs the requested tests of
:mod:`twinnet.sim_tb.network_cocotb` and returns what each test recorded.
"""

import hashlib
import json
import time
from pathlib import Path

from twinnet.gen.manifest import Manifest
from twinnet.program import driver

from . import runner

TEST_MODULE = "twinnet.sim_tb.network_cocotb"
#: Traffic in hardware (:mod:`twinnet.hdl.traffic`): its cocotb module and its one test.
TRAFFIC_MODULE = "twinnet.sim_tb.traffic_cocotb"
TRAFFIC_TEST = "hardware_traffic"
#: How traffic in hardware runs: ``program`` (Verilator only: the C++ program of
#: :mod:`twinnet.program.driver`, fastest), ``cocotb`` (the Verilog harness through
#: cocotb, on either simulator), ``auto`` (the program where it can run the points and no
#: waveforms are asked for, else cocotb).
ENGINES = ("auto", "program", "cocotb")

class SimulationFailed(AssertionError):
    """A cocotb test of :data:`TEST_MODULE` failed. ``test`` names it, ``cause`` is
    ``"deadlock"`` (the watchdog fired), ``"check"`` (the scoreboard found errors) or
    ``"error"`` (anything else, e.g. a build failure), and ``summary`` says what went wrong in
    one line."""

    def __init__(self, test: str | None, cause: str, summary: str):
        super().__init__(summary)
        self.test, self.cause, self.summary = test, cause, summary

    def __reduce__(self):  # picklable, so that it crosses from a worker process
        return type(self), (self.test, self.cause, self.summary)


#: The network top's signals the cocotb bench reaches (see :mod:`twinnet.hdl.network`).
TOP_SIGNALS = ("clk", "rst", "pe_*", "trace_*", "drop_count")

#: The cocotb tests of :data:`TEST_MODULE` (see their docstrings for what each takes).
TESTS = ("uniform_traffic", "all_pairs", "load_sweep", "saturation_drains", "deadlock_pattern",
         "zero_load_latency", "malformed_dropped", "broadcast_traffic", "bad_framing",
         "trace_replay")


def simulate(network, simulator: str, build_dir, tests: dict, *, family=None,
             trace: bool = True, waves: bool | None = None, log: bool = False,
             progress=None, run_dir=None, stalls: bool = False,
             link_counters: bool = False) -> dict:
    """Generate ``network`` into ``build_dir/rtl``, build it on ``simulator`` in ``build_dir``
    and run ``tests`` (cocotb test name → its settings); return test name → recorded values.
    ``family`` is the network's :class:`twinnet.families.Family` (by default the one its
    configuration belongs to).

    ``trace`` adds the link trace (the scoreboard then checks every hop); ``waves`` dumps
    waveforms (FST on Icarus, VCD on Verilator; see :func:`twinnet.sim_tb.runner.run`);
    ``log`` keeps the simulator's output in ``build.log``/``test.log`` instead of the terminal;
    ``progress`` is called with one line of text per step. Raises ``ValueError`` for an unknown
    test, :class:`SimulationFailed` when a test fails.

    The test ``hardware_traffic`` (alone) runs traffic in hardware instead (its settings are
    ``{"points": [...], "engine": ..., "threads": ..., "ranks": ...}``, see :data:`ENGINES`,
    :func:`twinnet.program.driver.run` and
    :mod:`twinnet.sim_tb.traffic_phases`; each point's result names its ``engine``): the
    network is generated with the traffic harness and without the trace. ``run_dir`` (default
    ``build_dir``) holds the run's configuration and results, so that several runs of one
    build can go on at once. ``stalls`` builds the routers with their stall counters, which
    the C++ program reads into each point's ``stalls``; ``link_counters`` adds the link
    counters (:mod:`twinnet.hdl.link_counter`), which both drivers read into a point's
    ``link_loads`` when it asks for them (``count_links``).
    """
    hardware = TRAFFIC_TEST in tests
    if hardware and len(tests) > 1:
        raise ValueError(f"{TRAFFIC_TEST} runs alone (its own top), not with "
                         f"{', '.join(sorted(set(tests) - {TRAFFIC_TEST}))}")
    unknown = sorted(set(tests) - set(TESTS) - {TRAFFIC_TEST})
    if unknown:
        raise ValueError(f"unknown network test {unknown[0]!r}; the tests are "
                         f"{', '.join((*TESTS, TRAFFIC_TEST))}")
    from twinnet.gen.generate import generate_network  # Amaranth only when generating

    # A point that asks for link loads needs the link counters.
    link_counters = link_counters or (hardware and any(
        point.get("count_links") for point in tests[TRAFFIC_TEST]["points"]))

    say = progress or (lambda text: None)
    build_dir = Path(build_dir)
    run_dir = Path(run_dir) if run_dir is not None else build_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rtl = build_dir / "rtl"
    stamp = build_dir / "rtl.fingerprint"
    # The harness's Verilog top only when the run goes through it, not the program.
    harness = hardware and not _on_program(tests[TRAFFIC_TEST], simulator, waves,
                                           network.flit_width)
    fingerprint = generation_fingerprint(network, family, trace=trace and not hardware,
                                         traffic=hardware, harness=harness, stalls=stalls,
                                         **({"link_counters": True} if link_counters else {}))
    if rtl.is_dir() and stamp.exists() and stamp.read_text() == fingerprint:
        files = sorted(rtl.iterdir())
        routers = len(Manifest.read(_manifest(files)).routers)
        say(f"reusing the generated {network.name}: {routers} routers (parameters and "
            "twinnet unchanged)")
    else:
        stamp.unlink(missing_ok=True)
        files = generate_network(network, rtl, family=family, trace=trace and not hardware,
                                 traffic=hardware, harness=harness, stalls=stalls,
                                 link_counters=link_counters)
        stamp.write_text(fingerprint)
        routers = len(Manifest.read(_manifest(files)).routers)
        say(f"generated {network.name}: {routers} routers "
            f"({time.perf_counter() - started:.1f} s)")
    say(f"building on {simulator} and running {', '.join(tests)} (log in {run_dir})"
        if log else f"building on {simulator} and running {', '.join(tests)}")
    started = time.perf_counter()
    results = run_generated(simulator, build_dir, tests, run_dir=run_dir, waves=waves, log=log)
    say(f"done ({time.perf_counter() - started:.1f} s)")
    return results


def _on_program(settings: dict, simulator: str, waves, flit_width: int) -> bool:
    """Whether ``hardware_traffic`` with ``settings`` will run on the C++ program."""
    engine = settings.get("engine", "auto")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    return driver.chosen(engine, simulator, runner.waves_wanted(waves), flit_width,
                                  settings["points"])


def generation_fingerprint(network, family, **options) -> str:
    """What the generated Verilog of ``network`` depends on: its parameters, its family, the
    generation ``options``, the versions of Amaranth and Python, and every source file of
    twinnet and of the package a plug-in family comes from (so that any change to the
    generator or the family regenerates)."""
    import importlib
    import platform
    from importlib.metadata import version

    from twinnet.families import family_for

    family = family or family_for(network)
    digest = hashlib.sha256(json.dumps(
        [network.to_dict(), network.name, family.name, options, version("amaranth"),
         platform.python_version()], sort_keys=True, default=str).encode())
    # The family's own package too, when it comes from another package (a plug-in).
    plugins = {module.split(".")[0] for module in (type(family).__module__, family.hardware)
               if module and module.split(".")[0] != "twinnet"}
    for package in ("twinnet", "twinnet.model", "twinnet.hdl", "twinnet.families",
                    "twinnet.gen", "twinnet.sim_tb", "twinnet.boards", *sorted(plugins)):
        module = importlib.import_module(package)
        for folder in getattr(module, "__path__", [str(Path(module.__file__).parent)]):
            pattern = "*.py" if package == "twinnet" else "**/*.py"
            for path in sorted(Path(folder).glob(pattern)):
                digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run_generated(simulator: str, build_dir, tests: dict, *, run_dir=None,
                  waves: bool | None = None, log: bool = False) -> dict:
    """Run ``tests`` on the network :func:`simulate` generated into ``build_dir`` (building
    it if needed; an unchanged build is reused), with configuration and results in
    ``run_dir`` (default ``build_dir``): several runs of one build may go on at once, each in
    its own ``run_dir``. Returns and raises as :func:`simulate`."""
    build_dir = Path(build_dir)
    run_dir = Path(run_dir) if run_dir is not None else build_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    files = sorted((build_dir / "rtl").glob("*.v")) + \
        sorted((build_dir / "rtl").glob("*.manifest.json"))
    results = run_dir / "results.json"
    results.unlink(missing_ok=True)
    try:
        _run(simulator, build_dir, run_dir, tests, files, results, waves, log)
    except AssertionError as error:
        raise _failure(results, error) from None
    return json.loads(results.read_text())


def _failure(results: Path, error: AssertionError) -> SimulationFailed:
    """What the failed test recorded in ``results`` (see ``_checked`` in the cocotb module)."""
    recorded = json.loads(results.read_text()) if results.exists() else {}
    for test, values in recorded.items():
        if isinstance(values, dict) and "failure" in values:
            detail = values["detail"].splitlines()
            if values["failure"] == "deadlock":
                first = detail[0].removesuffix("; stuck channels:")
                return SimulationFailed(test, "deadlock", f"{test}: deadlock: {first}")
            return SimulationFailed(test, "check", f"{test}: the scoreboard found "
                                    f"{values['errors']} errors, first: {detail[0]}")
    return SimulationFailed(None, "error", str(error))


def _run(simulator, build_dir, run_dir, tests, files, results, waves, log) -> None:
    manifest = Manifest.read(_manifest(files))
    blocks = hierarchy_blocks(manifest.modules, len(manifest.routers))
    if TRAFFIC_TEST in tests:
        settings = tests[TRAFFIC_TEST]
        points = settings["points"]
        on_program = _on_program(settings, simulator, waves, manifest.head_flit.width)
        if settings.get("ranks", 1) > 1 and not on_program:
            raise ValueError("ranks: more than one applies to the traffic program only")
        if on_program:
            if simulator != "verilator":
                raise ValueError("the traffic program runs on Verilator only")
            ranks = settings.get("ranks", 1)
            executable = driver.build(build_dir / "rtl", build_dir / "program", manifest,
                                      mpi=ranks > 1)
            driver.run(executable, manifest, points, results, settings.get("threads", 1),
                       ranks)
            return
        traffic = manifest.traffic
        if traffic.verilog is None:
            raise ValueError(f"{build_dir} was generated without the harness's Verilog top "
                             "(for the program): generate it with harness=True")
        # The sources and sinks are inlined into the top, only the routers are hierarchy
        # blocks: on the 8x8 torus at 0.3 flits/PE/cycle that ran 3,000 instead of 2,200
        # cycles/s (all inlined: 4,000, but twice the build time).
        toplevel, module = traffic.top, TRAFFIC_MODULE
        public = ["clk", "rst", *(port["name"] for port in traffic.ports)]
    else:
        toplevel, module, public = manifest.top, TEST_MODULE, TOP_SIGNALS
    runner.run(simulator=simulator, sources=[path for path in files if path.suffix == ".v"],
               toplevel=toplevel, test_module=module, build_dir=build_dir, run_dir=run_dir,
               testcase=list(tests), waves=waves, log=log, public=public, hier_blocks=blocks,
               config={"manifest": str(_manifest(files).resolve()), "tests": tests,
                       "results": str(results.resolve())})


def hierarchy_blocks(modules: dict[str, str], routers: int) -> list[str]:
    """The router modules Verilator builds once each as hierarchy blocks: all of them when the
    routers share modules (at least two routers a module on average), else none. A block
    costs a build of its own, which pays off only when instances share it: the king mesh KM4
    (16 routers of 9 modules) built flat in 33 s instead of 55 s (quick build), while KT4's 16
    routers of one module build in a fraction of the flat time."""
    blocks = sorted(set(modules.values()))
    return blocks if routers >= 2 * len(blocks) else []


def _manifest(files: list[Path]) -> Path:
    return next(path for path in files if path.suffix == ".json")


def manifest_of(build_dir) -> dict:
    """The manifest of the network generated into ``build_dir`` by :func:`simulate`, its JSON
    as another tool reads it (:meth:`Manifest.of` is its typed view)."""
    return json.loads(next((Path(build_dir) / "rtl").glob("*.manifest.json")).read_text())
