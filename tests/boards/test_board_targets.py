"""Board targets and their self-test top.

- Every board's build files are written without running the tools (``do_build=False``): the
  network's Verilog, the RTLIL top and constraints that place the pass/fail LEDs and the
  UART's transmit pin where the platform has them.
- The self-test top of every board's default network runs in cocotb on Icarus and passes:
  every packet created was received, no sink counted an error, and the UART line decoded by
  the testbench carries the same counts and ``PASS``. With a fault injected (a corrupted
  flit, a misrouted head, a duplicated packet) the same top reports ``FAIL``.
- The same self-test through AXI4-Stream interfaces (``--ni axi-stream``): frames of 1 to the
  longest beats made and checked in hardware on every PE's slave and master pass; a corrupted
  first beat makes it fail with exactly one error; a beat too narrow for the frames' fields is
  refused in one line before anything is written.
- The UART transmitter sends 8N1 frames of ``divisor`` cycles per bit (checked bit by bit
  against a hand-written frame in Amaranth's simulator).
"""

import math
import re

import pytest
from amaranth.sim import Simulator
from tiers import default_only

from twinnet.boards.targets import BOARDS, board_build, default_network, simulate
from twinnet.cli.gen_cmd import network_from_words
from twinnet.cli.main import main
from twinnet.hdl.selftest import UartTx

BUILD = "build/boards"


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_every_board_writes_its_build_files(board, tmp_path):
    built = board_build(board, tmp_path / board, do_build=False)
    network = default_network(board).name
    assert built["network"] == network and "bitstream" not in built
    for name in ("selftest.il", "selftest.lpf", "build_selftest.sh",
                 f"rtl/{network}_traffic.v", f"rtl/{network}.v"):
        assert name in built["files"], name
    constraints = (tmp_path / board / "selftest.lpf").read_text()
    platform = BOARDS[board].platform_class()()
    for name, index, colour in (BOARDS[board].passed_led, BOARDS[board].failed_led):
        resource = platform.lookup(name, index)
        pins = [subsignal for subsignal in resource.ios
                if not colour or subsignal.name == colour]
        site = pins[0].ios[0].names[0] if colour else resource.ios[0].names[0]
        assert re.search(rf'LOCATE COMP "{name}_{index}__{colour + "__" if colour else ""}'
                         rf'io" SITE "{site}"', constraints), (name, index, colour, site)
    uart = platform.lookup("uart", 0)
    tx_site = next(sub for sub in uart.ios if sub.name == "tx").ios[0].names[0]
    assert f'LOCATE COMP "uart_0__tx__io" SITE "{tx_site}"' in constraints


# The first board (whose top the faults below run on) in the default suite, the others in
# the slow tier.
@pytest.mark.parametrize("board", default_only(sorted(BOARDS), {sorted(BOARDS)[0]}))
def test_the_self_test_passes_in_simulation(board, icarus):
    results = simulate(default_network(board), icarus, f"{BUILD}/{board}")
    assert results["done"] and results["passed"] and not results["failed"]
    assert results["created"] == results["received"] > 50 and results["errors"] == 0
    # Packets of 1 to L flits, uniform: the mean length within 3 standard errors of (L+1)/2.
    longest = default_network(board).max_packet_length
    mean, sd = (longest + 1) / 2, math.sqrt((longest ** 2 - 1) / 12)
    assert abs(results["flits"] / results["received"] - mean) < \
        3 * sd / math.sqrt(results["received"]), (results["flits"], results["received"])
    assert results["line"] == (f"twinnet sent {results['created']:08X} recv "
                               f"{results['received']:08X} err 00000000 PASS")


@pytest.mark.parametrize("fault", ["corrupt", "misroute", "duplicate"])
def test_a_fault_makes_the_self_test_fail(fault, icarus):
    board = sorted(BOARDS)[0]
    # Its own build folder: the cases may run at once in parallel workers.
    results = simulate(default_network(board), icarus, f"{BUILD}/{board}-{fault}",
                       fault=fault)
    assert results["done"] and results["failed"] and not results["passed"]
    assert results["errors"] == 1
    assert results["line"].endswith(" err 00000001 FAIL")


#: A 2x2 torus with AXI4-Stream interfaces (3-byte beats, frames of up to 3 beats), on the
#: network's clock and on clocks of their own (driven by the same clock on a board), and with
#: frames of up to 3 packets (9 beats), reassembled.
INTERFACES = {"shared": ["torus", "--radix", "2,2", "--ni", "axi-stream"],
              "separate": ["torus", "--radix", "2,2", "--ni", "axi-stream", "--ni-clock",
                           "separate"],
              "frames": ["torus", "--radix", "2,2", "--ni", "axi-stream",
                         "--ni-frame-packets", "3"]}


# Frames of several packets in the slow tier (tests/sim/test_axi_stream.py reassembles them
# in the default suite).
@pytest.mark.parametrize("clocks", default_only(sorted(INTERFACES), {"shared", "separate"}))
def test_the_self_test_passes_through_the_interfaces(clocks, icarus):
    network = network_from_words(INTERFACES[clocks])
    results = simulate(network, icarus, f"{BUILD}/axis-{clocks}")
    assert results["done"] and results["passed"] and not results["failed"]
    assert results["created"] == results["received"] > 50 and results["errors"] == 0
    # Frames of 1 to their most beats (L - 1 = 3 per packet), uniform: the mean within 3
    # standard errors of the middle.
    beats = network.max_frame_beats
    mean, sd = (beats + 1) / 2, math.sqrt((beats ** 2 - 1) / 12)
    assert abs(results["flits"] / results["received"] - mean) < \
        3 * sd / math.sqrt(results["received"]), (results["flits"], results["received"])
    assert results["line"] == (f"twinnet sent {results['created']:08X} recv "
                               f"{results['received']:08X} err 00000000 PASS")


def test_a_corrupted_frame_makes_the_self_test_through_the_interfaces_fail(icarus):
    results = simulate(network_from_words(INTERFACES["shared"]), icarus,
                       f"{BUILD}/axis-corrupt", fault="corrupt")
    assert results["done"] and results["failed"] and not results["passed"]
    assert results["errors"] == 1
    assert results["line"].endswith(" err 00000001 FAIL")


def test_a_beat_too_narrow_for_the_frames_is_one_line(tmp_path, capsys):
    """1-byte beats hold a PE number (2 bits), a beat count of up to 7 (3 bits) and only 3
    bits of sequence number: refused, nothing written."""
    assert main(["board", "build", "--board", "ulx3s-85f", *INTERFACES["shared"],
                 "--ni-bytes", "1", "--max-packet-length", "8", "--no-bitstream", "--out",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--ni-bytes 2" in err[0] and "8" in err[0], err
    assert not (tmp_path / "out").exists()


def test_the_uart_sends_8n1_frames():
    divisor = 3
    uart = UartTx(divisor)
    sim = Simulator(uart)
    sim.add_clock(1e-6)
    line = []

    async def bench(ctx):
        for byte in (0x41, 0xF0):
            ctx.set(uart.data.payload, byte)
            ctx.set(uart.data.valid, 1)
            await ctx.tick().until(uart.data.ready)
            await ctx.tick()
            ctx.set(uart.data.valid, 0)
            for _ in range(12 * divisor):
                line.append(ctx.get(uart.tx))
                await ctx.tick()

    sim.add_testbench(bench)
    sim.run()
    # Start bit, eight data bits LSB first, stop bit; each bit `divisor` cycles; idle high.
    for index, byte in enumerate((0x41, 0xF0)):
        sent = line[index * 12 * divisor:(index + 1) * 12 * divisor]
        start = sent.index(0)
        bits = [0] + [byte >> i & 1 for i in range(8)] + [1]
        expected = [bit for bit in bits for _ in range(divisor)]
        assert sent[start:start + 10 * divisor] == expected
        assert all(sent[start + 10 * divisor:]) and all(sent[:start])
