"""cocotb tests of the router with the header-driven test routing.

Run through :func:`twinnet.sim_tb.runner.run` (see ``tests/sim/test_router_cocotb.py``), which
passes a JSON file with ``router`` (``RouterConfig.to_dict()``), ``format``
(``FlitFormat.describe()``) and test settings (``cycles``, ``seed``). The expected port and VC
of every packet come from the header the test itself wrote, never from the router.
"""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge

from twinnet.hdl.config import RouterConfig
from twinnet.model.widths import index_width

from .layout import Fields
from .link import LinkDriver, LinkMonitor
from .pe import PeDriver, PeMonitor
from .runner import load_config
from .scoreboard import Scoreboard


class RouterBench:
    """Drivers on every input, monitors on every output, a scoreboard, and packet building.

    Parameters:
        dut: the cocotb top (the router's Verilog).
        idle: probability that a driver leaves a cycle empty.
        release: per-output probability that a link monitor frees a flit in a cycle, or a PE
            monitor raises ready (random back-pressure); a float or a list per port.
    """

    def __init__(self, dut, *, idle: float = 0.0, release=1.0, seed: int | None = None):
        self.dut = dut
        settings = load_config()
        self.settings = settings
        self.config = config = RouterConfig.from_dict(settings["router"])
        self.format = settings["format"]
        self.head = Fields(self.format["head"])
        seed = settings.get("seed", 1) if seed is None else seed
        self.rng = random.Random(seed)
        self.scoreboard = Scoreboard()
        self.next_id = 1
        self.drivers, self.monitors = [], []
        if release is None:  # random back-pressure, a different rate on every output
            release = [self.rng.uniform(0.3, 0.9) for _ in range(config.port_count)]
        elif not isinstance(release, list):
            release = [release] * config.port_count
        for index, port in enumerate(config.ports):
            described = self.format["ports"][index]
            fields_in, fields_out = Fields(described["in"]), Fields(described["out"])
            rng = random.Random(self.rng.getrandbits(32))

            def arrived(vc, flits, index=index):
                self.scoreboard.receive(index, vc, flits)

            if port.is_pe:
                self.drivers.append(PeDriver(dut, dut.clk, f"in_{index}", fields_in, idle=idle,
                                             rng=rng))
                self.monitors.append(PeMonitor(dut, dut.clk, f"out_{index}", fields_out,
                                               ready=release[index], on_packet=arrived, rng=rng))
            else:
                self.drivers.append(LinkDriver(
                    dut, dut.clk, f"in_{index}", fields_in, vc_count=port.vc_count,
                    depth=port.buffer_depth, max_packet_length=config.max_packet_length, idle=idle,
                    rng=rng))
                self.monitors.append(LinkMonitor(
                    dut, dut.clk, f"out_{index}", fields_out, vc_count=port.output_vc_count,
                    depth=port.buffer_depth, release=release[index], on_packet=arrived, rng=rng))

    async def start(self):
        """Start the clock, reset the router, start drivers and monitors."""
        Clock(self.dut.clk, 10, unit="ns").start()
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 3)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0
        for component in self.drivers + self.monitors:
            component.start()

    def set_release(self, rate: float) -> None:
        for monitor in self.monitors:
            if isinstance(monitor, PeMonitor):
                monitor.ready_rate = rate
            else:
                monitor.release = rate

    def packet(self, in_port: int, out_port: int, out_vc: int, *, bubble: bool = False) -> list:
        """A packet's flits: a unique head (routing fields, source, packet number), random body.
        """
        values = {"route.port": out_port, "source": in_port, "payload": self.next_id}
        if "route.vc" in self.head:
            values["route.vc"] = out_vc
        if bubble:
            values["route.bubble"] = 1
        if "source" not in self.head:
            del values["source"]
        self.next_id += 1
        body = [self.rng.getrandbits(self.config.flit_width)
                for _ in range(self.config.max_packet_length - 1)]
        return [self.head.pack(values), *body]

    def send(self, in_port: int, in_vc: int, out_port: int, out_vc: int, *,
             bubble: bool = False) -> list:
        """Queue a packet at ``in_port``/``in_vc`` for ``out_port``/``out_vc``; expect it."""
        flits = self.packet(in_port, out_port, out_vc, bubble=bubble)
        self.drivers[in_port].send(in_vc, flits)
        self.scoreboard.expect(flits, port=out_port, vc=out_vc, flow=(in_port, in_vc, out_port))
        return flits

    def source_of(self, head: int) -> int:
        return self.head.get(head, "source")

    def errors(self) -> list[str]:
        found = list(self.scoreboard.errors)
        for index, component in enumerate(self.drivers):
            found += [f"input {index}: {e}" for e in component.errors]
        for index, component in enumerate(self.monitors):
            found += [f"output {index}: {e}" for e in component.errors]
        return found

    def check(self) -> None:
        errors = self.errors()
        assert not errors, f"{len(errors)} errors, first ones:\n" + "\n".join(errors[:10])

    async def drain(self, limit: int = 20000) -> int:
        """Wait until every queued packet has arrived; return the cycles waited."""
        for cycle in range(limit):
            if self.scoreboard.outstanding == 0 and all(d.idle_now for d in self.drivers):
                return cycle
            await FallingEdge(self.dut.clk)
            if cycle % 256 == 0:
                self.check()
        raise AssertionError(f"{self.scoreboard.outstanding} packets still in flight after "
                             f"{limit} cycles")


@cocotb.test()
async def random_traffic(dut):
    """Random packets from every input VC to every output VC with random back-pressure for
    ``cycles`` cycles (a few malformed ones among them, which must be dropped and counted):
    each arrives once, intact, on the port and VC its header named, in order per flow."""
    bench = RouterBench(dut, idle=0.2, release=None)
    config, rng = bench.config, bench.rng
    await bench.start()
    cycles = bench.settings.get("cycles", 20000)
    port_bits = index_width(config.port_count)
    vc_field = index_width(config.max_vc_count) if "route.vc" in bench.head else 0
    malformed = 0
    pairs = set()
    for _ in range(cycles):
        await FallingEdge(dut.clk)
        for in_port, driver in enumerate(bench.drivers):
            queued = (len(driver.queue) if isinstance(driver, PeDriver)
                      else sum(len(q) for q in driver.queues))
            if queued >= 2 * config.max_packet_length:
                continue
            in_vc = rng.randrange(config.vc_counts[in_port])
            if rng.random() < 0.02:
                # A header the router must refuse: a port number past the last port, or a VC
                # number the chosen output does not have.
                bad_ports = range(config.port_count, 1 << port_bits)
                bad_vcs = [(p, v) for p in range(config.port_count)
                           for v in range(config.output_vc_counts[p], 1 << vc_field)]
                if bad_ports and (not bad_vcs or rng.random() < 0.5):
                    route = {"route.port": rng.choice(bad_ports)}
                elif bad_vcs:
                    port, vc = rng.choice(bad_vcs)
                    route = {"route.port": port, "route.vc": vc}
                else:
                    route = None
                if route is not None:
                    head = bench.head.pack({**route, "payload": bench.next_id})
                    bench.next_id += 1
                    driver.send(in_vc, [head] + [0] * (config.max_packet_length - 1))
                    malformed += 1
                    continue
            out_port = rng.randrange(config.port_count)
            out_vc = rng.randrange(config.output_vc_counts[out_port])
            bubble = config.ports[out_port].bubble and rng.random() < 0.25
            bench.send(in_port, in_vc, out_port, out_vc, bubble=bubble)
            pairs.add((in_port, out_port))
    bench.set_release(1.0)
    await bench.drain()
    await ClockCycles(dut.clk, 4)
    bench.check()
    expected_pairs = {(i, o) for i in range(config.port_count) for o in range(config.port_count)}
    assert pairs == expected_pairs, f"untested input/output pairs: {expected_pairs - pairs}"
    dropped = int(dut.drop_count.value)
    assert dropped == malformed, f"drop_count is {dropped}, {malformed} malformed packets sent"
    dut._log.info("%d packets delivered, %d malformed dropped, %d cycles",
                  bench.scoreboard.received, malformed, cycles)


def _bubble_port(config: RouterConfig) -> tuple[int, list[int]]:
    """A bubble output port and two link inputs other than it."""
    out = next(i for i, port in enumerate(config.ports) if port.bubble)
    inputs = [i for i in range(config.port_count) if i != out]
    return out, inputs


@cocotb.test()
async def bubble_admission(dut):
    """A bubble packet waits while the downstream VC has room for one packet but not two, a
    plain packet advances with the same room, and the bubble packet goes once room for two
    appears."""
    bench = RouterBench(dut)
    config = bench.config
    length = config.max_packet_length
    out, (first_in, second_in, *_) = _bubble_port(config)
    depth = config.ports[out].buffer_depth
    monitor = bench.monitors[out]
    monitor.limit[0] = 0  # the downstream VC 0 keeps what it receives
    arrived = []
    monitor.on_head = lambda vc, head: arrived.append(bench.source_of(head))
    await bench.start()

    # Fill the downstream VC until exactly one packet of room is left.
    fillers = (depth - length) // length
    for _ in range(fillers):
        bench.send(first_in, 0, out, 0)
    await ClockCycles(dut.clk, 20 + 2 * depth)
    assert len(arrived) == fillers, f"{len(arrived)} of {fillers} filler packets arrived"
    room = depth - fillers * length
    assert length <= room < 2 * length

    bench.send(first_in, 0, out, 0, bubble=True)
    await ClockCycles(dut.clk, 100)
    assert len(arrived) == fillers, "the bubble packet advanced with room for one packet only"

    bench.send(second_in, 0, out, 0)  # the same move without the bubble flag
    await ClockCycles(dut.clk, 20)
    assert arrived[fillers:] == [second_in], (
        f"the plain packet did not advance with room for one packet: arrivals {arrived}")

    # Free one packet: room for one again, still not two.
    monitor.limit[0] = length
    await ClockCycles(dut.clk, 60)
    assert len(arrived) == fillers + 1, "the bubble packet advanced with room for one packet"

    # Free another: room for two packets, the bubble packet goes.
    monitor.limit[0] += length
    await ClockCycles(dut.clk, 30)
    assert arrived[fillers + 1:] == [first_in], f"the bubble packet did not advance: {arrived}"
    monitor.limit.pop(0)
    await bench.drain()
    bench.check()


@cocotb.test()
async def fairness(dut):
    """Every input saturates one output VC (from all its input VCs, with back-pressure on the
    output): in the order packets win the output, each input appears at least once in every
    window of (inputs) consecutive grants. (All packets ask for the same output VC: a packet
    bound to one VC may rightly wait while packets for another VC pass.)"""
    bench = RouterBench(dut, release=0.8)
    config = bench.config
    out = 0
    inputs = list(range(config.port_count))
    grants = []
    bench.monitors[out].on_head = lambda vc, head: grants.append(bench.source_of(head))
    await bench.start()
    total = bench.settings.get("fairness_grants", 2000)
    per_input = total // len(inputs) + 4
    rng = bench.rng
    for _ in range(per_input):
        for in_port in inputs:
            bench.send(in_port, rng.randrange(config.vc_counts[in_port]), out, 0)
    await bench.drain(limit=per_input * len(inputs) * config.max_packet_length * 3)
    bench.check()
    # Judge only the saturated part: all inputs still had packets queued.
    saturated = grants[:total]
    assert len(saturated) >= total
    window = len(inputs)
    for start in range(len(saturated) - window + 1):
        missing = set(inputs) - set(saturated[start:start + window])
        assert not missing, (f"inputs {sorted(missing)} not granted in grants "
                             f"{start}..{start + window - 1}: {saturated[start:start + window]}")
    dut._log.info("%d grants checked, every input within every %d", len(saturated), window)


@cocotb.test()
async def throughput(dut):
    """No contention (input i to output i+1, back-to-back packets on one VC, no
    back-pressure): every output carries one flit per cycle."""
    bench = RouterBench(dut)
    config = bench.config
    count = config.port_count
    measure_from, window = 100, 1000
    packets = (measure_from + window) // config.max_packet_length + 20
    for in_port in range(count):
        for _ in range(packets):
            bench.send(in_port, 0, (in_port + 1) % count, 0)
    await bench.start()
    await ClockCycles(dut.clk, measure_from)
    before = [m.received_flits for m in bench.monitors]
    await ClockCycles(dut.clk, window)
    after = [m.received_flits for m in bench.monitors]
    rates = [(a - b) / window for a, b in zip(after, before)]
    dut._log.info("flits per cycle per output: %s", rates)
    assert all(rate == 1.0 for rate in rates), f"flits per cycle per output: {rates}"
    await bench.drain()
    bench.check()
