"""cocotb test of a network's AXI4-Stream interfaces, driven by cocotbext-axi.

The top is ``<name>_axis`` (:class:`twinnet.hdl.axi_stream.AxiStreamNetwork`). Every PE's
slave gets an ``AxiStreamSource`` and its master an ``AxiStreamSink``, each with a random pause
generator. Each source sends ``frames`` frames of random lengths (1 byte to the longest
frame): one to every PE, itself included, as far as they go (all pairs when ``frames`` >= P),
the rest to PEs drawn uniformly, several in flight per pair; and among them bad requests,
frames to a ``tdest`` that names no PE and frames longer than the longest. The test checks
that every good frame arrives exactly once, byte for byte, whole, at its destination, with
``tid`` its source (and above it the random ``tid`` it was sent with, with ``id_width``), in
the order sent per pair (where the routing keeps a pair's packets in
order: ``ordered``), that no bad frame arrives anywhere, and that each interface's counters
count its bad frames exactly.

Settings (``TWINNET_TB_CONFIG``): ``pes``, ``data_bytes``, ``max_frame_bytes``, ``dest_width``,
``id_width`` (bits of the slaves' ``tid``), ``user_width`` (``tuser`` bits: each frame sends
a random one on every beat, and gets it back on every beat),
``frames`` (per source), ``sizes`` (the fewest and most bytes of a good frame), ``ordered``,
``separate_clocks`` (each PE's ports on a clock of its own, of the periods
:data:`PE_PERIODS_NS` in turn), ``bad_dest`` and ``oversize`` (frames of each fault per
source), ``pause`` (the chance that a source pauses in a cycle; a sink's too unless
``sink_pause``), ``seed``. The test writes ``results.json``: frames delivered, cycles of the
network's clock, and each interface's counters.

The test ``load`` (:func:`load`) is one point of a sweep through the interfaces
(``twinnet sweep --ni axi-stream``): open-loop traffic at an offered load.
"""

import json
import random
import time
from collections import deque
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from .axi_stream_sim import frame_flits
from .runner import load_config

#: Cycles without a delivered frame after which the test gives up (a lost frame or a hang).
PATIENCE = 20_000
#: The network's clock period, and the periods (ns) the PEs' own clocks take in turn with
#: ``separate_clocks``: unrelated to it and to each other, faster and slower.
NETWORK_PERIOD_NS = 10
PE_PERIODS_NS = (7, 13, 17, 11, 23, 9)


def _pauses(rng: random.Random, chance: float):
    while True:
        yield rng.random() < chance


async def _ports(dut, config: dict, rng: random.Random):
    """Start the clocks, put a source on every slave and a sink on every master (with their
    pause generators), hold every reset over several cycles of the slowest clock and release
    them; return the sources and the sinks."""
    pes = config["pes"]
    cocotb.start_soon(Clock(dut.clk, NETWORK_PERIOD_NS, unit="ns").start())
    dut.rst.value = 1
    clocks = [(dut.clk, dut.rst)] * pes
    if config["separate_clocks"]:
        clocks = [(getattr(dut, f"ni_{pe}_clk"), getattr(dut, f"ni_{pe}_rst"))
                  for pe in range(pes)]
        for pe, (clock, reset) in enumerate(clocks):
            reset.value = 1
            cocotb.start_soon(Clock(clock, PE_PERIODS_NS[pe % len(PE_PERIODS_NS)],
                                    unit="ns").start())
    sources = [AxiStreamSource(AxiStreamBus.from_prefix(dut, f"s_axis_{pe}"), *clocks[pe])
               for pe in range(pes)]
    sinks = [AxiStreamSink(AxiStreamBus.from_prefix(dut, f"m_axis_{pe}"), *clocks[pe])
             for pe in range(pes)]
    for port in sources:
        port.set_pause_generator(_pauses(random.Random(rng.random()), config["pause"]))
    for port in sinks:
        port.set_pause_generator(_pauses(random.Random(rng.random()),
                                         config.get("sink_pause", config["pause"])))
    await ClockCycles(dut.clk, 4 * max(PE_PERIODS_NS) // NETWORK_PERIOD_NS + 4)
    dut.rst.value = 0
    for _, reset in clocks:
        reset.value = 0
    await RisingEdge(dut.clk)
    return sources, sinks


@cocotb.test()
async def frames(dut):
    config = load_config()
    pes, seed = config["pes"], config["seed"]
    rng = random.Random(seed)
    sources, sinks = await _ports(dut, config, rng)

    longest = config["max_frame_bytes"]
    # Per (source, destination), the payloads of the frames expected, in order.
    expected = {}
    for pe, source in enumerate(sources):
        # The good frames' destinations: every PE once (all pairs, the sender's own too) as
        # far as the frames go, the rest drawn uniformly.
        reach = list(range(pes))
        rng.shuffle(reach)
        dests = reach[:config["frames"]] + [rng.randrange(pes)
                                            for _ in range(config["frames"] - pes)]
        plan = ([("good", dest) for dest in dests] + [("bad_dest", None)] * config["bad_dest"]
                + [("oversize", None)] * config["oversize"])
        rng.shuffle(plan)
        for frame, dest in plan:
            size = rng.randint(*config["sizes"])
            if frame == "oversize":
                dest = rng.randrange(pes)
            if frame == "bad_dest":
                dest = rng.randrange(pes, 1 << config["dest_width"])
            elif frame == "oversize":
                size = rng.randint(longest + 1, longest + 3 * config["data_bytes"])
            payload = bytes(rng.randrange(256) for _ in range(size))
            tid = rng.randrange(1 << config["id_width"])
            user = rng.randrange(1 << config["user_width"])
            if frame == "good":
                expected.setdefault((pe, dest), []).append((payload, tid, user))
            await source.send(AxiStreamFrame(payload, tdest=dest,
                                             tid=tid if config["id_width"] else None,
                                             tuser=user if config["user_width"] else None))
    awaited = sum(len(frames) for frames in expected.values())

    received = {}
    delivered, idle, cycles = 0, 0, 0
    pe_mask = (1 << config["dest_width"]) - 1
    while delivered < awaited:
        await RisingEdge(dut.clk)
        cycles += 1
        idle += 1
        for pe, sink in enumerate(sinks):
            while not sink.empty():
                frame = sink.recv_nowait()
                # tid: the core's tid above the sending PE's number.
                received.setdefault((frame.tid & pe_mask, pe), []).append(
                    (bytes(frame.tdata), frame.tid >> config["dest_width"],
                     frame.tuser if config["user_width"] else 0))
                delivered += 1
                idle = 0
        assert idle < PATIENCE, (f"{delivered} of {awaited} frames delivered, none for "
                                 f"{PATIENCE} cycles")
    await ClockCycles(dut.clk, 200)  # anything more (a duplicate, a bad frame) shows now
    for sink in sinks:
        assert sink.empty(), "a frame arrived that was not sent, or arrived twice"
    assert set(received) <= set(expected), (
        f"frames from {sorted(set(received) - set(expected))} (tid, PE) were never sent there")
    for pair, frames in expected.items():
        got = received.get(pair, [])
        assert len(got) == len(frames), f"{pair}: {len(got)} frames of {len(frames)}"
        if not config["ordered"]:  # a pair's packets may overtake each other
            frames, got = sorted(frames), sorted(got)
        for index, (sent, (data, tid, user)) in enumerate(zip(frames, got)):
            assert data == sent[0], (
                f"{pair} frame {index}: {data.hex()} instead of {sent[0].hex()}")
            assert (tid, user) == sent[1:], (
                f"{pair} frame {index}: tid {tid}, tuser {user} instead of {sent[1:]}")
    counters = {pe: {name: int(getattr(dut, f"ni_{pe}_{name}").value)
                     for name in ("bad_dest", "oversize")} for pe in range(pes)}
    for pe, counts in counters.items():
        assert counts == {"bad_dest": config["bad_dest"], "oversize": config["oversize"]}, (
            f"PE {pe}: counters {counts}")
    Path("results.json").write_text(json.dumps(
        {"frames": {"delivered": delivered, "cycles": cycles,
                    "counters": {str(pe): counts for pe, counts in counters.items()}}}))


@cocotb.test()
async def load(dut):
    """One point of a sweep through the interfaces: open-loop traffic at an offered load.

    Settings beside the common ones: ``rate`` (the chance that a PE's core makes a frame in a
    cycle of the network's clock), ``warmup`` and ``measure`` (cycles), ``packet_beats`` (the
    most beats of a packet, to count a frame's flits: a head per packet and a flit per beat).
    Every PE's core makes frames of ``sizes`` bytes (uniform) to PEs drawn uniformly (itself
    included) for ``warmup + measure`` cycles into its source's queue, which waits as long as
    the interface does; then everything drains. Every frame is checked as in :func:`frames`
    (once, byte for byte, at its destination, tid its sender, in order per pair where
    ``ordered``). Writes ``load`` in ``results.json``: the flits per PE per cycle made
    (``made_flits_per_pe_cycle``) and delivered (``accepted_flits_per_pe_cycle``) in the
    measured cycles, and the latency of the frames made then, from the cycle
    a frame is made (its wait in the source's queue included) to the cycle its last beat has
    left the master."""
    config = load_config()
    pes, rng = config["pes"], random.Random(config["seed"])
    sources, sinks = await _ports(dut, config, rng)
    low, high = config["sizes"]
    beat_bytes, packet_beats = config["data_bytes"], config["packet_beats"]
    warmup, end = config["warmup"], config["warmup"] + config["measure"]
    pe_mask = (1 << config["dest_width"]) - 1

    def flits(size: int) -> int:
        return frame_flits(size, beat_bytes, packet_beats)

    # Per (source, destination): the frames on their way, oldest first (payload, cycle made,
    # made in the measured cycles).
    pending = {}
    made = delivered = offered = accepted = idle = cycle = 0
    latencies = []
    started = time.perf_counter()
    while cycle < end or delivered < made:
        await RisingEdge(dut.clk)
        cycle += 1
        idle += 1
        measured = warmup < cycle <= end
        if cycle <= end:
            for pe, source in enumerate(sources):
                if rng.random() < config["rate"]:
                    dest, payload = rng.randrange(pes), rng.randbytes(rng.randint(low, high))
                    pending.setdefault((pe, dest), deque()).append((payload, cycle, measured))
                    source.send_nowait(AxiStreamFrame(
                        payload, tdest=dest, tid=0 if config["id_width"] else None,
                        tuser=0 if config["user_width"] else None))
                    made += 1
                    offered += flits(len(payload)) if measured else 0
        for pe, sink in enumerate(sinks):
            while not sink.empty():
                frame = sink.recv_nowait()
                data, pair = bytes(frame.tdata), (frame.tid & pe_mask, pe)
                waiting = pending.get(pair)
                assert waiting, f"a frame from PE {pair[0]} at PE {pe} that was not sent there"
                index = 0 if config["ordered"] else next(
                    (i for i, entry in enumerate(waiting) if entry[0] == data), 0)
                payload, when, counted = waiting[index]
                del waiting[index]
                assert data == payload, (f"{pair}: {data.hex()} instead of {payload.hex()}, "
                                         "the next frame sent")
                delivered += 1
                idle = 0
                accepted += flits(len(data)) if measured else 0
                if counted:
                    latencies.append(cycle - when)
        assert idle < PATIENCE, (f"{delivered} of {made} frames delivered, none for "
                                 f"{PATIENCE} cycles")
    seconds = time.perf_counter() - started
    await ClockCycles(dut.clk, 200)
    for sink in sinks:
        assert sink.empty(), "a frame arrived that was not sent, or arrived twice"
    cells = pes * config["measure"]
    Path("results.json").write_text(json.dumps({"load": {
        "made_flits_per_pe_cycle": offered / cells,
        "accepted_flits_per_pe_cycle": accepted / cells,
        "mean_latency": sum(latencies) / len(latencies) if latencies else 0.0,
        "max_latency": max(latencies, default=0), "measured_frames": len(latencies),
        "frames": made, "cycles": cycle, "cycles_per_second": cycle / seconds}}))
