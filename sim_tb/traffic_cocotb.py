"""cocotb test that runs traffic in hardware: it only configures, waits and reads counters.

The design is a traffic harness (:mod:`twinnet.hdl.traffic`, top ``<network>_traffic``). The
configuration (see :func:`twinnet.sim_tb.runner.run`) holds ``manifest``, ``results`` and,
under ``tests.hardware_traffic.points``, the points to run one after the other, each after a
reset. A point is a dict of

- ``pattern`` (a name of :data:`twinnet.model.traffic.PATTERNS`), ``rate`` (packets per
  terminal per cycle, on average), ``seed``, ``hotspot_fraction``;
- ``injection``: ``bernoulli`` (a packet with probability ``rate`` every cycle) or ``onoff``
  (bursts: a source turns on and off as a two-state Markov chain; while on it creates a
  packet every ``packet_length`` cycles on average, its link's capacity, for ``burst``
  packets on average; the chance of turning on makes the average ``rate``, which must be
  below one packet per ``packet_length`` cycles);
- ``fault``: ``none``, or a fault the harness injects once (``misroute``, ``duplicate``,
  ``corrupt``; see :data:`twinnet.hdl.traffic.FAULTS`): the point then reports the sinks'
  error counts under ``errors`` instead of failing on them;
- ``warmup``, ``measure`` (cycles): packets created during the ``measure`` cycles are the
  measured ones (BookSim's measurement phase); under all-pairs, creation goes on until every
  source has created its P - 1 packets;
- ``drain_limit`` (cycles to deliver the measured packets while traffic goes on; past it,
  beyond saturation, creation stops and the point is reported ``unstable``: its latencies
  include packets that starved until then) and ``watchdog`` (cycles without any delivery,
  with packets in flight, once creation has stopped, that count as a deadlock).

The simulation advances ``chunk`` cycles per wait (the clock runs in the simulator, so no
Python runs in between); it reads the harness's counters between chunks.
"""

import json
import time
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer

from twinnet.model.traffic import PATTERNS

from .runner import load_config

PERIOD_NS = 10
COUNTERS = ("created", "created_measured", "overflowed", "injected", "received",
            "received_measured", "flits_measured", "latency_sum", "total_latency_sum",
            "wrong_destination", "out_of_order", "corrupt", "framing", "latency_max",
            "drop_count", "faults", "now")
ERRORS = ("wrong_destination", "out_of_order", "corrupt", "framing", "drop_count")
DEFAULTS = {"pattern": "uniform", "rate": 0.01, "seed": 1, "hotspot_fraction": 0.0,
            "injection": "bernoulli", "burst": 8, "fault": "none",
            "warmup": 1000, "measure": 2000, "drain_limit": 200_000, "watchdog": 3000,
            "chunk": 200}


class Deadlock(AssertionError):
    """No packet was delivered for ``watchdog`` cycles while packets were in flight."""


class TrafficError(AssertionError):
    """A sink counted an error, or packets went missing."""


def _read(dut) -> dict:
    return {name: int(getattr(dut, name).value) for name in COUNTERS}


def _histogram(dut, bins: int) -> list[int]:
    word, width = int(dut.histogram.value), len(dut.histogram) // bins
    return [(word >> (i * width)) & ((1 << width) - 1) for i in range(bins)]


async def _cycles(count: int) -> None:
    if count > 0:
        await Timer(count * PERIOD_NS, unit="ns")


async def run_point(dut, point: dict, manifest: dict) -> dict:
    """Reset, run one point's phases and return what it measured (see the module
    docstring); raises :class:`Deadlock` or :class:`TrafficError`."""
    point = {**DEFAULTS, **point}
    traffic = manifest["traffic"]
    length = manifest["parameters"]["packet_length"]
    terminals = manifest["derived"]["pe_count"]
    scale = 1 << traffic["rate_bits"]
    dut.rate.value = min(scale - 1, round(point["rate"] * scale))
    dut.onoff.value = point["injection"] == "onoff"
    if point["injection"] == "onoff":
        # On for burst * length cycles on average, creating at 1/length while on; the
        # average rate is on_rate * p_on / (p_on + p_off).
        on_rate, turn_off = 1 / length, 1 / (point["burst"] * length)
        turn_on = point["rate"] * turn_off / (on_rate - point["rate"])
        dut.rate.value = min(scale - 1, round(on_rate * scale))
        dut.turn_on.value = max(1, min(scale - 1, round(turn_on * scale)))
        dut.turn_off.value = max(1, round(turn_off * scale))
    dut.fault.value = traffic["faults"].index(point["fault"])
    dut.pattern.value = PATTERNS.index(point["pattern"])
    dut.hotspot_rate.value = min(scale - 1, round(point["hotspot_fraction"] * scale))
    dut.seed.value = point["seed"]
    dut.enable.value = 0
    dut.measure.value = 0
    dut.rst.value = 1
    await FallingEdge(dut.clk)
    await _cycles(2)
    dut.rst.value = 0
    started = time.perf_counter()
    dut.enable.value = 1
    await _cycles(point["warmup"])
    dut.measure.value = 1
    await _cycles(point["measure"])
    dut.measure.value = 0
    window = _read(dut)
    chunk = point["chunk"]
    spent, unstable = 0, False
    # Traffic goes on until the measured packets have arrived (and, for all-pairs, until
    # every source has sent to every other terminal).
    everything = terminals * (terminals - 1) if point["pattern"] == "all-pairs" else 0
    while True:
        values = _read(dut)
        if values["received_measured"] >= window["created_measured"] and \
                values["created"] >= everything:
            break
        if spent >= point["drain_limit"]:
            # Beyond saturation some measured packets may starve while traffic goes on: stop
            # creating and let the network drain (a deadlock is caught there).
            unstable = True
            break
        await _cycles(chunk)
        spent += chunk
    dut.enable.value = 0
    idle, last = 0, values["received"]
    # A duplicated packet is injected twice and received twice.
    duplicates = values["faults"] if point["fault"] == "duplicate" else 0
    while True:  # everything drains
        values = _read(dut)
        if values["received"] == values["injected"] == values["created"] + duplicates:
            break
        idle = 0 if values["received"] != last else idle + chunk
        last = values["received"]
        if idle >= point["watchdog"]:
            raise Deadlock(f"no packet delivered for {idle} cycles with "
                           f"{values['injected'] - values['received']} in flight and "
                           f"{values['created'] - values['injected']} queued (cycle "
                           f"{values['now']})")
        await _cycles(chunk)
    seconds = time.perf_counter() - started
    errors = {name: values[name] for name in ERRORS if values[name]}
    if errors and point["fault"] == "none":
        raise TrafficError(f"the sinks counted errors: {errors}")
    measured = window["created_measured"]
    cycles = values["now"] - 2
    return dict(
        pattern=point["pattern"], rate=point["rate"], seed=point["seed"],
        injection=point["injection"], fault=point["fault"], faults_applied=values["faults"],
        errors=errors,
        offered_flits_per_pe_cycle=point["rate"] * length,
        created_flits_per_pe_cycle=window["created_measured"] * length / terminals
        / point["measure"],
        accepted_flits_per_pe_cycle=window["flits_measured"] / terminals / point["measure"],
        overflowed=values["overflowed"], created=values["created"],
        packets=values["received"], measured_packets=measured,
        mean_latency=values["latency_sum"] / measured if measured else None,
        mean_total_latency=values["total_latency_sum"] / measured if measured else None,
        max_latency=values["latency_max"],
        latency_histogram=_histogram(dut, traffic["histogram_bins"]),
        unstable=unstable,
        cycles=cycles, wall_seconds=seconds, cycles_per_second=cycles / seconds)


@cocotb.test()
async def hardware_traffic(dut):
    """Each point of ``tests.hardware_traffic.points`` in turn; results under ``points``."""
    config = load_config()
    manifest = json.loads(Path(config["manifest"]).read_text())
    points = config["tests"]["hardware_traffic"]["points"]
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns", impl="gpi").start())
    results, failure = [], None
    try:
        for point in points:
            results.append(await run_point(dut, point, manifest))
            dut._log.info("point %s", json.dumps(results[-1]))
    except (Deadlock, TrafficError) as error:
        failure = {"failure": "deadlock" if isinstance(error, Deadlock) else "check",
                   "detail": str(error), "errors": 0 if isinstance(error, Deadlock) else 1}
        raise
    finally:
        path = Path(config["results"])
        path.write_text(json.dumps({"hardware_traffic": {"points": results, **(failure or {})}},
                                   indent=1))
