"""The router's stages as the properties see them: subclasses that keep references to the
registers and buffers their parent builds, with the parent's logic unchanged.

Each observed stage records what it built while the router is elaborated; the property set
(:mod:`.router`) reads the records afterwards. A mutant (:mod:`.mutants`) subclasses one of
these and overrides one method.
"""

import functools
from dataclasses import dataclass

from amaranth.hdl import Fragment

from ..arbiter import RoundRobinArbiter
from ..flit_buffer import FlitBuffer
from ..router import Router
from ..router.input_unit import InputUnit
from ..router.output_unit import OutputUnit
from ..router.packet_allocator import PacketAllocator
from ..router.split import SplitComposition
from ..shift_fifo import ShiftFIFO


class ObservedFlitBuffer(FlitBuffer):
    """A :class:`FlitBuffer` that keeps its memory (``memory``), its pointers (``produce``,
    ``consume``) and a second, asynchronous read port of its memory (``peek``), whose address
    the proof drives."""

    def storage(self, m):
        self.memory = super().storage(m)
        self.peek = self.memory.read_port(domain="comb")
        return self.memory

    def pointers(self):
        self.produce, self.consume = super().pointers()
        return self.produce, self.consume


class ObservedShiftFIFO(ShiftFIFO):
    """A :class:`ShiftFIFO` that keeps its registers (``slots``: holds an entry;
    ``entries``), front first."""

    def registers(self):
        self.slots, self.entries = super().registers()
        return self.slots, self.entries


class ObservedInputUnit(InputUnit):
    """An :class:`InputUnit` that hands itself to ``observer`` and keeps its flit buffers
    (``buffers``, :class:`ObservedFlitBuffer`), route queues (``route_queues``,
    :class:`ObservedShiftFIFO`), waiting credits (``credit_waits``, split
    router) and, on a PE port, its framing registers (``framing``: flit count and VC of the
    packet being written)."""

    credit_waits = ()
    framing = None
    flit_buffer = ObservedFlitBuffer
    route_queue = ObservedShiftFIFO

    def __init__(self, stage, port_index, route_compute, *, observer):
        super().__init__(stage, port_index, route_compute)
        observer.append(self)

    def _make_buffers(self, m):
        self.buffers, self.route_queues = super()._make_buffers(m)
        return self.buffers, self.route_queues

    def _credit_waits(self) -> list:
        self.credit_waits = super()._credit_waits()
        return self.credit_waits

    def _framing(self):
        self.framing = super()._framing()
        return self.framing


class ObservedOutputUnit(OutputUnit):
    """An :class:`OutputUnit` that keeps its credit counters (``spare``, per output VC) and,
    on a PE port, its ejection buffer (``eject``, an :class:`ObservedFlitBuffer`)."""

    eject = None
    spare = ()
    flit_buffer = ObservedFlitBuffer

    def _credit_counter(self, m, w: int, returned):
        return self.keep(super()._credit_counter(m, w, returned))

    def keep(self, spare):
        """Record output VC ``len(self.spare)``'s credit counter ``spare``; returns it."""
        self.spare = (*self.spare, spare)
        return spare

    def _ejection_buffer(self):
        self.eject = super()._ejection_buffer()
        return self.eject


class ObservedArbiter(RoundRobinArbiter):
    """A :class:`RoundRobinArbiter` that keeps its priority state (``priority``: for two
    requesters "the second goes first", for more the mask of requesters after the last
    grant; None for one requester)."""

    priority = None

    def _two(self, m):
        self.priority = super()._two(m)
        return self.priority

    def _rotating(self, m):
        self.priority = super()._rotating(m)
        return self.priority


class ObservedPacketAllocator(PacketAllocator):
    """A :class:`PacketAllocator` of :class:`ObservedArbiter` that keeps them: per output,
    ``port_arbiters[o]`` and ``vc_arbiters[o][p]``."""

    arbiter = ObservedArbiter

    def elaborate(self, platform):
        m = super().elaborate(platform)
        ports = range(len(self.vc_counts))
        self.port_arbiters = [m.submodules[f"port_{o}"] for o in range(self.output_count)]
        self.vc_arbiters = [[m.submodules[f"vc_{o}_{p}"] for p in ports]
                            for o in range(self.output_count)]
        return m


class ObservedSplitComposition(SplitComposition):
    """A :class:`SplitComposition` that hands itself to ``observer`` once built and keeps its
    allocator (``allocator``) and grants (``grants``)."""

    packet_allocator = ObservedPacketAllocator

    def __init__(self, stage, m, vcs, outputs, *, observer):
        super().__init__(stage, m, vcs, outputs)
        observer.append(self)

    def _allocation(self):
        self.grants, copy_take = super()._allocation()
        self.allocator = self.m.submodules.packet_allocator
        return self.grants, copy_take


@dataclass
class Observed:
    """An elaborated :class:`FormalRouter`: its ``fragment``, its ``composition``
    (:class:`ObservedSplitComposition`), its ``inputs`` (:class:`ObservedInputUnit`, by
    port) and ``outputs`` (:class:`ObservedOutputUnit`, by port)."""

    fragment: Fragment
    composition: ObservedSplitComposition
    inputs: list
    outputs: list


class FormalRouter(Router):
    """A :class:`Router` of observed stages (a split router: ``pipeline`` 3)."""

    input_unit = ObservedInputUnit
    output_unit = ObservedOutputUnit
    split_composition = ObservedSplitComposition

    def observe(self, platform) -> Observed:
        """Elaborate the router and return what its stages built."""
        inputs, compositions = [], []
        self.input_unit = functools.partial(type(self).input_unit, observer=inputs)
        self.split_composition = functools.partial(type(self).split_composition,
                                                   observer=compositions)
        fragment = Fragment.get(self, platform)
        composition = compositions[0]
        return Observed(fragment, composition, inputs, composition.outputs)
