"""cocotb test of a board self-test top (:class:`twinnet.hdl.selftest.SelfTest`).

It clocks and resets the top, waits for the verdict (``done``) within ``timeout`` cycles, then
listens to the UART line ``tx`` (``divisor`` clock cycles per bit, 8N1) and decodes the next
complete report line (the top pauses between lines). It writes to the ``results`` file the
verdict outputs, the counts the top shows on its ports and the decoded line; the Python test
compares them.
"""

import json
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge

from .runner import load_config

PERIOD_NS = 10


async def uart_byte(dut, divisor: int) -> int:
    """The next byte on ``tx``: wait for the start bit, sample each bit in its middle (on
    falling clock edges, half a cycle away from the edges ``tx`` changes on)."""
    while True:
        await FallingEdge(dut.clk)
        if int(dut.tx.value) == 0:
            break
    await ClockCycles(dut.clk, divisor // 2, rising=False)
    value = 0
    for bit in range(8):
        await ClockCycles(dut.clk, divisor, rising=False)
        value |= int(dut.tx.value) << bit
    await ClockCycles(dut.clk, divisor, rising=False)
    assert int(dut.tx.value) == 1, f"no stop bit after {value:#x}"
    return value


async def uart_line(dut, divisor: int) -> str:
    """The next complete line: once ``tx`` has idled (high) for longer than a character,
    the characters up to the end of the line."""
    idle = 0
    while idle < 12 * divisor:
        await FallingEdge(dut.clk)
        idle = idle + 1 if int(dut.tx.value) else 0
    line = []
    while (byte := await uart_byte(dut, divisor)) != ord("\n"):
        line.append(chr(byte))
    return "".join(line).rstrip("\r")


@cocotb.test()
async def selftest(dut):
    config = load_config()
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns", impl="gpi").start())
    dut.rst.value = 1
    await FallingEdge(dut.clk)
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    waited = 0
    while not int(dut.done.value) and waited < config["timeout"]:
        await ClockCycles(dut.clk, 100)
        waited += 100
    results = {name: int(getattr(dut, name).value)
               for name in ("done", "passed", "failed", "created", "received", "flits",
                                 "errors")}
    results["cycles"] = waited
    results["line"] = await uart_line(dut, config["divisor"]) if results["done"] else None
    Path(config["results"]).write_text(json.dumps(results, indent=1))
