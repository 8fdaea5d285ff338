"""cocotb testbench parts for a generated network of any family.

The network top (see :mod:`twinnet.hdl.network`) brings every PE port out on vector buses
and, when generated with ``trace=True``, shows every link's flits. One coroutine per clock
cycle drives all injection buses and samples every bus once, which keeps Python's per-cycle
cost independent of how many signals a PE has.

- :class:`PacketFormat` builds and decodes packets as the manifest lays them out;
- :class:`NetworkBench` is the driver (per-PE injection queues), the PE monitor (reassembles
  packets at every ejection port, with optional random back-pressure), the link monitor
  (records each packet's hops from the trace) and the deadlock watchdog;
- :class:`NetworkScoreboard` checks each delivered packet against the reference model: delivered
  exactly once, intact, at the right PE, in order per source–destination pair where the
  family keeps it (:meth:`twinnet.families.Family.in_order`), and, when traced, every hop's
  (router, output port, VC) allowed by the family's model relation
  (:meth:`twinnet.families.Family.path_error`: the model's path under deterministic
  routing); a broadcast's copies each intact, and all of them, once complete, against
  :meth:`twinnet.families.Family.broadcast_error` (one copy per router, every link crossing
  the forwarding rule's).

Terminals (PEs) are numbers ``0 … P-1``, in the order of the top's PE buses.
"""

import random
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field

from cocotb.triggers import ReadOnly, RisingEdge

from twinnet.families import Family
from twinnet.gen.manifest import Manifest

from .layout import Fields
from .traffic_phases import Deadlock


class CheckError(AssertionError):
    """The scoreboard's errors: ``errors`` lists them all; the message shows the first 20."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors[:20]))
        self.errors = errors


class PacketFormat:
    """Packets laid out as the manifest's ``head_flit`` says: the destination's route fields
    (``route.*``, from the family's codec), ``source``; the head's ``payload`` holds a sequence
    number. Body flit ``i`` is a word derived from (source, sequence, i), so
    that a corrupted or swapped flit is noticed. A packet has 1 to ``max_packet_length``
    flits (default the most)."""

    def __init__(self, manifest: Manifest, max_packet_length: int):
        self.width = manifest.head_flit.width
        self.head = Fields(manifest.head_flit.fields)
        self.max_packet_length = max_packet_length
        self.seq_bits = self.head.fields["payload"][1]
        # Head bits a router may rewrite on the way (a broadcast's TTL).
        offset, width = self.head.fields.get("route.ttl", (0, 0))
        self.kept = ~(((1 << width) - 1) << offset)
        if self.seq_bits < 4:
            raise ValueError(f"flit_width {self.width} leaves {self.seq_bits} bits for the "
                             "sequence number; the testbench needs at least 4")

    def flits(self, route: dict[str, int], source: int, seq: int,
              length: int | None = None) -> list[int]:
        head = self.head.pack({"source": source, **route,
                               "payload": seq % (1 << self.seq_bits)})
        mask = (1 << self.width) - 1
        body = [((seq * 2654435761) ^ (source * 40503) ^ (i * 0x9E3779B1)) & mask
                for i in range(1, length or self.max_packet_length)]
        return [head, *body]

    def intact(self, sent: list[int], received: list[int]) -> bool:
        """``received`` is ``sent`` but for the head bits routers rewrite."""
        return (len(sent) == len(received) and sent[1:] == received[1:]
                and (sent[0] ^ received[0]) & self.kept == 0)

    def identity(self, head: int) -> tuple[int, int]:
        """``(source, sequence mod 2**seq_bits)`` of a head flit."""
        return self.head.get(head, "source"), self.head.get(head, "payload")


@dataclass
class Packet:
    source: int
    destination: int | None  # None for a malformed packet
    seq: int
    flits: list[int]
    offered: int = 0  # cycle the packet was queued
    injected: int | None = None  # cycle its head flit was accepted
    delivered: int | None = None  # cycle its head flit was ejected
    finished: int | None = None  # cycle its tail flit was ejected
    hops: list = field(default_factory=list)  # (router, port, vc) seen on links
    received: list = field(default_factory=list)
    broadcast_pe: int | None = None  # a broadcast: the PE its copies leave at
    receivers: list = field(default_factory=list)  # a broadcast: terminals that got a copy
    marks: list | None = None  # (first, last) per flit when not those of a whole packet


class NetworkScoreboard:
    """Expected results from the reference model; collects every error it sees."""

    def __init__(self, family: Family, network, *, check_hops: bool):
        self.family, self.network, self.check_hops = family, network, check_hops
        self.ordered = family.in_order(network)
        self.errors: list[str] = []
        self.delivered: dict[tuple[int, int], Packet] = {}
        self.order: dict[tuple, int] = {}

    def label(self, terminal: int) -> str:
        return self.family.terminal_label(self.network, terminal)

    def deliver(self, packet: Packet, at_pe: int) -> None:
        key = (packet.source, packet.seq)
        if packet.destination is None:
            self.errors.append(f"malformed packet {key} was delivered to PE {at_pe}")
            return
        if key in self.delivered:
            self.errors.append(f"packet {key} delivered twice")
        self.delivered[key] = packet
        if at_pe != packet.destination:
            self.errors.append(f"packet {key} for PE {packet.destination} "
                               f"({self.label(packet.destination)}) arrived at PE {at_pe}")
        if packet.received != packet.flits:
            self.errors.append(f"packet {key} corrupted: sent {packet.flits}, "
                               f"got {packet.received}")
        pair = (key[0], packet.destination)
        if self.ordered and self.order.get(pair, -1) > packet.seq:
            self.errors.append(f"packet {key} overtook a later packet of the pair {pair}")
        self.order[pair] = max(self.order.get(pair, -1), packet.seq)
        if self.check_hops:
            error = self.family.path_error(self.network, packet.source, packet.destination,
                                           packet.hops)
            if error is not None:
                self.errors.append(f"packet {key} {self.label(packet.source)}->"
                                   f"{self.label(packet.destination)} took {packet.hops}: "
                                   f"{error}")

    def copy(self, packet: Packet, at_pe: int, words: list[int], fmt: PacketFormat) -> None:
        """One copy of a broadcast arrived at ``at_pe``: it must be intact."""
        if not fmt.intact(packet.flits, words):
            self.errors.append(f"broadcast {(packet.source, packet.seq)} corrupted at PE "
                               f"{at_pe}: sent {packet.flits}, got {words}")

    def broadcast_done(self, packet: Packet) -> None:
        """Every copy of a broadcast has arrived: hold them all to the model."""
        hops = packet.hops if self.check_hops else None
        error = self.family.broadcast_error(self.network, packet.source, packet.broadcast_pe,
                                            hops, packet.receivers)
        if error is not None:
            self.errors.append(f"broadcast {(packet.source, packet.seq)} from "
                               f"{self.label(packet.source)}: {error}")


class NetworkBench:
    """Drives and watches a generated network; see the module docstring.

    Parameters:
        dut: the cocotb handle of the network top.
        manifest: the generator's manifest, for the link list and trace layout.
        family: the network's :class:`twinnet.families.Family`.
        network: the configuration rebuilt from the manifest's parameters.
        eject_ready: probability that a PE accepts an ejected flit in a cycle (back-pressure).
        watchdog: cycles without any flit moving, while packets are in flight, that count as
            a deadlock.
    """

    def __init__(self, dut, manifest: Manifest, family: Family, network, *, seed: int = 1,
                 eject_ready: float = 1.0, watchdog: int = 2000):
        self.dut, self.manifest, self.family, self.network = dut, manifest, family, network
        self.format = PacketFormat(manifest, network.max_packet_length)
        self.pes = range(family.terminal_count(network))
        self.terminal_routers = manifest.terminals
        self.random = random.Random(seed)
        self.eject_ready, self.watchdog = eject_ready, watchdog
        self.queues: list[deque[Packet]] = [deque() for _ in self.pes]
        self.next_flit = [0] * len(self.pes)
        self.assembling: list[Packet | None] = [None] * len(self.pes)
        self.in_flight: dict[tuple[int, int], Packet] = {}
        self.seq = defaultdict(int)
        self.cycle = 0
        self.idle_cycles = 0
        self.trace = manifest.trace
        # One link's element of ``trace_flit``, as the manifest lays it out.
        self.trace_fields = Fields(self.trace["layout"]) if self.trace is not None else None
        self.links = manifest.links
        self.scoreboard = NetworkScoreboard(family, network, check_hops=self.trace is not None)
        self.sent: list[Packet] = []
        self.broadcasts: list[Packet] = []
        # Copies of a broadcast: one per router with PEs, the source's excepted.
        self.copies_expected = len(set(self.terminal_routers)) - 1
        self.malformed_sent = 0
        self.link_heads = Counter()  # link index -> head flits seen on it (with the trace)
        # Packets cut short at their source (bad framing): (source, seq) -> (PE, flits)
        # expected, and those that arrived, with their flits.
        self.aborted_expected: dict[tuple[int, int], tuple[int, int]] = {}
        self.aborted_arrived: dict[tuple[int, int], tuple[int, int]] = {}

    # -- traffic ---------------------------------------------------------------------------------

    def offer(self, source: int, destination: int, length: int | None = None) -> Packet:
        """Queue a packet of ``length`` flits (default the most) from PE ``source`` to PE
        ``destination``."""
        seq = self.seq[source]
        self.seq[source] += 1
        route = self.family.destination(self.network, destination)
        flits = self.format.flits(route, source, seq, length)
        packet = Packet(source, destination, seq, flits, offered=self.cycle)
        self.queues[source].append(packet)
        self.sent.append(packet)
        return packet

    def offer_broadcast(self, source: int, pe: int = 0, length: int | None = None) -> Packet:
        """Queue a broadcast of ``length`` flits (default the most) from PE ``source`` whose
        copies leave at PE ``pe`` of every other router."""
        route = self.family.broadcast_route(self.network, pe)
        if route is None:
            raise ValueError("this network's routers do not replicate broadcasts")
        seq = self.seq[source]
        self.seq[source] += 1
        packet = Packet(source, None, seq, self.format.flits(route, source, seq, length),
                        offered=self.cycle, broadcast_pe=pe)
        self.queues[source].append(packet)
        self.broadcasts.append(packet)
        return packet

    def offer_malformed(self, source: int, route: dict[str, int]) -> Packet:
        """Queue a packet with the malformed route fields ``route`` (to be dropped)."""
        seq = self.seq[source]
        self.seq[source] += 1
        flits = self.format.flits(route, source, seq)
        packet = Packet(source, None, seq, flits, offered=self.cycle)
        self.queues[source].append(packet)
        self.malformed_sent += 1
        return packet

    def offer_flits(self, source: int, flits: list[tuple[int, int, int]]) -> None:
        """Queue flits ``(data, first, last)`` from PE ``source`` as they are, whatever their
        framing (see :meth:`expect_aborted` for a packet the router cuts short)."""
        packet = Packet(source, None, -1, [data for data, _, _ in flits], offered=self.cycle,
                        marks=[(first, last) for _, first, last in flits])
        self.queues[source].append(packet)

    def head_of(self, source: int, destination: int) -> tuple[int, int]:
        """The head flit of a new packet from ``source`` to ``destination`` and its sequence
        number (taken from the source's numbering, like :meth:`offer`'s)."""
        seq = self.seq[source]
        self.seq[source] += 1
        route = self.family.destination(self.network, destination)
        return self.format.flits(route, source, seq, 1)[0], seq

    def expect_aborted(self, source: int, seq: int, destination: int, flits: int) -> None:
        """A packet from ``source`` numbered ``seq`` is to arrive at ``destination`` cut
        short by its source's router: ``flits`` flits, ``abort`` on its tail, once."""
        key = (source, seq % (1 << self.format.seq_bits))
        self.aborted_expected[key] = (destination, flits)

    @property
    def pending(self) -> int:
        """Packets offered but not yet delivered (malformed ones count until accepted)."""
        queued = sum(len(q) for q in self.queues)
        return queued + len(self.in_flight)

    # -- the per-cycle loop ----------------------------------------------------------------------

    async def reset(self, cycles: int = 4) -> None:
        dut = self.dut
        for name in ("pe_in_valid", "pe_in_first", "pe_in_last", "pe_in_data", "pe_out_ready"):
            getattr(dut, name).value = 0
        dut.rst.value = 1
        for _ in range(cycles):
            await RisingEdge(dut.clk)
        dut.rst.value = 0

    async def run(self, cycles: int, *, until_drained: bool = False) -> None:
        """Run ``cycles`` cycles (or fewer, once everything is delivered if ``until_drained``).

        Raises :class:`Deadlock` when the watchdog fires.
        """
        for _ in range(cycles):
            if until_drained and not self.pending:
                return
            await self.step()

    async def step(self, reset: int | None = None) -> None:
        """One cycle: the PEs' flits and ready, then what moved. ``reset``: drive ``rst`` too,
        from this cycle on (with the inputs, so that ``ready`` is read under it)."""
        dut, width = self.dut, self.network.flit_width
        await RisingEdge(dut.clk)
        self.cycle += 1
        if reset is not None:
            dut.rst.value = reset
        valid = first = last = data = 0
        for index, queue in enumerate(self.queues):
            if queue:
                flit = self.next_flit[index]
                marks = queue[0].marks
                valid |= 1 << index
                if marks is None:
                    first |= (flit == 0) << index
                    last |= (flit == len(queue[0].flits) - 1) << index
                else:
                    first |= marks[flit][0] << index
                    last |= marks[flit][1] << index
                data |= queue[0].flits[flit] << (index * width)
        dut.pe_in_valid.value = valid
        dut.pe_in_first.value = first
        dut.pe_in_last.value = last
        dut.pe_in_data.value = data
        ready = (1 << len(self.pes)) - 1
        if self.eject_ready < 1.0:
            ready = sum(1 << i for i in range(len(self.pes))
                        if self.random.random() < self.eject_ready)
        dut.pe_out_ready.value = ready
        await ReadOnly()
        moved = self._accept_injections(valid & int(dut.pe_in_ready.value))
        moved |= self._collect_ejections(int(dut.pe_out_valid.value) & ready)
        if self.trace is not None:
            moved |= self._follow_links()
        self._watch(moved)

    def _accept_injections(self, accepted: int) -> bool:
        for index in _bits(accepted):
            queue = self.queues[index]
            packet = queue[0]
            if self.next_flit[index] == 0:
                packet.injected = self.cycle
                if packet.destination is not None or packet.broadcast_pe is not None:
                    self.in_flight[index, packet.seq % (1 << self.format.seq_bits)] = packet
            self.next_flit[index] += 1
            if self.next_flit[index] == len(packet.flits):
                self.next_flit[index] = 0
                queue.popleft()
        return bool(accepted)

    def _collect_ejections(self, ejected: int) -> bool:
        if not ejected:
            return False
        width, mask = self.network.flit_width, (1 << self.network.flit_width) - 1
        data = int(self.dut.pe_out_data.value)
        first, last = int(self.dut.pe_out_first.value), int(self.dut.pe_out_last.value)
        abort = int(self.dut.pe_out_abort.value)
        for index in _bits(ejected):
            word = (data >> (index * width)) & mask
            if first >> index & 1:
                key = self.format.identity(word)
                packet = self.in_flight.get(key)
                if packet is None and key in self.aborted_expected:
                    packet = Packet(key[0], None, -2, [])  # a packet cut short
                if packet is None:
                    self.scoreboard.errors.append(f"PE {index} received an unknown packet "
                                                  f"{key} (head {word:#x})")
                    packet = Packet(index, None, -1, [])
                packet.delivered = self.cycle
                self.assembling[index] = (packet, [word])
            elif self.assembling[index] is None:
                self.scoreboard.errors.append(f"PE {index} received a body flit first")
                continue
            else:
                self.assembling[index][1].append(word)
            if last >> index & 1:
                packet, words = self.assembling[index]
                self.assembling[index] = None
                if abort >> index & 1 or packet.seq == -2:
                    self._aborted(index, words, abort >> index & 1)
                elif packet.seq >= 0:
                    packet.finished = self.cycle
                    self._arrived(packet, index, words)
        return True

    def _aborted(self, at_pe: int, words: list[int], abort: int) -> None:
        """A packet ended with ``abort`` (or one expected to) arrived at ``at_pe``."""
        key = self.format.identity(words[0])
        if key not in self.aborted_expected or not abort:
            self.scoreboard.errors.append(f"PE {at_pe} received packet {key} with abort "
                                          f"{abort}, not as expected")
            return
        if key in self.aborted_arrived:
            self.scoreboard.errors.append(f"aborted packet {key} arrived twice")
        self.aborted_arrived[key] = (at_pe, len(words))

    def _arrived(self, packet: Packet, at_pe: int, words: list[int]) -> None:
        key = (packet.source, packet.seq % (1 << self.format.seq_bits))
        if packet.broadcast_pe is None:
            packet.received = words
            self.in_flight.pop(key, None)
            self.scoreboard.deliver(packet, at_pe)
            return
        packet.receivers.append(at_pe)
        self.scoreboard.copy(packet, at_pe, words, self.format)
        if len(packet.receivers) == self.copies_expected:
            self.in_flight.pop(key, None)
            self.scoreboard.broadcast_done(packet)

    def _follow_links(self) -> bool:
        valid = int(self.dut.trace_valid.value)
        if not valid:
            return False
        stride, fields = self.trace["stride"], self.trace_fields
        flits = int(self.dut.trace_flit.value)
        for link in _bits(valid):
            payload = flits >> (link * stride)
            if fields.get(payload, "first"):  # a head flit: record the hop
                self.link_heads[link] += 1
                key = self.format.identity(fields.get(payload, "data"))
                packet = self.in_flight.get(key)
                if packet is None and key in self.aborted_expected:
                    continue  # a packet cut short at its source: not followed
                if packet is not None:
                    origin = self.links[link]["from"]
                    vc = fields.get(payload, "vc")
                    packet.hops.append((origin["router"], origin["port"], vc))
                else:
                    self.scoreboard.errors.append(f"unknown head flit on link {link}")
        return True

    def _watch(self, moved: bool) -> None:
        self.idle_cycles = 0 if moved or not self.in_flight else self.idle_cycles + 1
        if self.idle_cycles >= self.watchdog:
            raise Deadlock(self.stuck_report())

    def stuck_report(self) -> str:
        """Which channels hold the packets that stopped moving (their last hop seen)."""
        lines = [f"no flit moved for {self.idle_cycles} cycles with {len(self.in_flight)} "
                 f"packets in flight (cycle {self.cycle}); stuck channels:"]
        stuck = defaultdict(list)
        for (_, seq), packet in self.in_flight.items():
            channel = (packet.hops[-1] if packet.hops
                       else (self.terminal_routers[packet.source], "PE", 0))
            label = self.scoreboard.label
            to = "all" if packet.destination is None else label(packet.destination)
            stuck[channel].append(f"{label(packet.source)}->{to}#{seq}")
        for (router, port, vc), packets in sorted(stuck.items()):
            lines.append(f"  {router} {port} vc{vc}: {len(packets)} packets, e.g. {packets[0]}")
        return "\n".join(lines)

    # -- results ---------------------------------------------------------------------------------

    def drop_count(self) -> int:
        return int(self.dut.drop_count.value)

    def copies_delivered(self) -> int:
        return sum(len(p.receivers) for p in self.broadcasts)

    def latencies(self) -> list[int]:
        return [p.delivered - p.injected for p in self.sent if p.delivered is not None]

    def check_all_delivered(self) -> None:
        """Every well-formed packet delivered exactly once, every packet cut short at its
        source arrived as expected, and no scoreboard error."""
        errors = list(self.scoreboard.errors)
        missing = [p for p in self.sent if p.delivered is None]
        if missing:
            label = self.scoreboard.label
            errors.append(f"{len(missing)} packets never delivered, e.g. "
                          f"{label(missing[0].source)}->{label(missing[0].destination)} "
                          f"seq {missing[0].seq}")
        if len(self.scoreboard.delivered) != len(self.sent) and not missing:
            errors.append(f"{len(self.scoreboard.delivered)} delivered, {len(self.sent)} sent")
        short = [p for p in self.broadcasts if len(p.receivers) != self.copies_expected]
        if self.aborted_arrived != self.aborted_expected:
            errors.append(f"packets cut short: expected (PE, flits) {self.aborted_expected}, "
                          f"arrived {self.aborted_arrived}")
        if short:
            errors.append(f"{len(short)} broadcasts did not reach every router, e.g. from "
                          f"{self.scoreboard.label(short[0].source)} seq {short[0].seq}: "
                          f"{len(short[0].receivers)} of {self.copies_expected} copies")
        if errors:
            raise CheckError(errors)


def _bits(value: int):
    """Indices of the set bits of ``value``, lowest first (cost per set bit, not per bit)."""
    while value:
        lowest = value & -value
        yield lowest.bit_length() - 1
        value ^= lowest
