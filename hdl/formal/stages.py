"""The router's stages as the properties see them: subclasses that keep references to the
registers and buffers their parent builds, with the parent's logic unchanged.

Each observed stage records what it built while the router is elaborated; the property set
(:mod:`.router`) reads the records afterwards. A mutant (:mod:`.mutants`) subclasses one of
these and overrides one method.
"""

import functools
from dataclasses import dataclass

from amaranth.hdl import Elaboratable, Fragment, Module, Mux, Value

from ..arbiter import RoundRobinArbiter
from ..flit_buffer import FlitBuffer
from ..router import Router
from ..router.compact import CompactComposition
from ..router.ejection import EjectionMerger
from ..router.input_unit import InputUnit
from ..router.islip import IslipAllocator
from ..router.output_unit import OutputUnit
from ..router.packet_allocator import PacketAllocator
from ..router.route_queue import RouteQueue
from ..router.split import SplitComposition
from ..router.switch_allocator import SwitchAllocator
from ..router.vc_allocator import VCAllocator


class ObservedFlitBuffer(FlitBuffer):
    """A :class:`FlitBuffer` that keeps its memory (``memory``), its pointers (``produce``,
    ``consume``), a second, asynchronous read port of its memory (``peek``), whose address
    the proof drives, and one more per slot (``slots[j]``: the j-th entry from the front,
    meaningful below ``level``; ``flags[j]``: its flag bit in the flag memory, with
    ``flag``); in block RAM, its prefetch registers (``ahead``, ``prefetch``)."""

    def storage(self, m):
        self.memory = super().storage(m)
        self.peek = self.memory.read_port(domain="comb")
        self.slot_ports = [self.memory.read_port(domain="comb") for _ in range(self.depth)]
        return self.memory

    def pointers(self):
        self.produce, self.consume = super().pointers()
        return self.produce, self.consume

    flag_ports = ()
    #: With ``memory="block"``: the registers of the entries 1 and 2 behind the front, and
    #: the read port's data (the entry behind the front); empty and None otherwise.
    ahead, prefetch = (), None

    def _block_front(self, m, storage, w_port, read):
        front, self.ahead, self.prefetch = super()._block_front(m, storage, w_port, read)
        return front, self.ahead, self.prefetch

    def flag_storage(self, m):
        flags = super().flag_storage(m)
        self.flag_ports = [flags.read_port(domain="comb") for _ in range(self.depth)]
        return flags

    def elaborate(self, platform):
        m = super().elaborate(platform)
        for j, port in enumerate(self.slot_ports):
            m.d.comb += port.addr.eq(_wrap(self.consume + j, self.depth))
        for j, port in enumerate(self.flag_ports):
            m.d.comb += port.addr.eq(_wrap(self.consume + j, self.depth))
        self.slots = [port.data for port in self.slot_ports]
        #: Per slot, the flag memory's copy of its flag bit (empty without one).
        self.flags = [port.data for port in self.flag_ports]
        return m


class ObservedRouteQueue(RouteQueue):
    """A :class:`RouteQueue` that keeps its memory (``memory``, None with one entry), its
    pointers (``produce``, ``consume``), its counters (``front_valid``, ``behind``) and one
    read port per entry of the memory
    (``behind_slots[j]``: the (j + 1)-th entry from the front, meaningful below
    ``level - 1``)."""

    memory = None
    behind_slots = ()

    def storage(self, m):
        self.memory = super().storage(m)
        if self.memory is not None:
            self.slot_ports = [self.memory.read_port(domain="comb")
                               for _ in range(self.depth - 1)]
        return self.memory

    def pointers(self):
        self.produce, self.consume = super().pointers()
        return self.produce, self.consume

    def counters(self):
        self.front_valid, self.behind = super().counters()
        return self.front_valid, self.behind

    def elaborate(self, platform):
        m = super().elaborate(platform)
        if self.memory is not None:
            for j, port in enumerate(self.slot_ports):
                m.d.comb += port.addr.eq(_wrap(self.consume + j, self.depth - 1))
            self.behind_slots = [port.data for port in self.slot_ports]
        return m


def _wrap(index, size: int):
    """``index mod size`` for ``index`` in ``[0, 2 * size)``."""
    return Mux(index >= size, index - size, index)


class ObservedInputUnit(InputUnit):
    """An :class:`InputUnit` that hands itself to ``observer`` and keeps its flit buffers
    (``buffers``, :class:`ObservedFlitBuffer`), route queues (``route_queues``,
    :class:`ObservedRouteQueue`), waiting credits (``credit_waits``, split router), the flit
    written in each cycle (``written``, ``write_valid``, ``write_vc``) and, on a PE port, its
    framing registers (``framing_state``)."""

    credit_waits = ()
    framing_state = None
    flit_buffer = ObservedFlitBuffer
    route_queue = ObservedRouteQueue

    def __init__(self, stage, port_index, route_compute, *, observer):
        super().__init__(stage, port_index, route_compute)
        observer.append(self)

    def _make_buffers(self, m):
        self.buffers, self.route_queues = super()._make_buffers(m)
        return self.buffers, self.route_queues

    def _credit_waits(self) -> list:
        self.credit_waits = super()._credit_waits()
        return self.credit_waits

    def _framing_state(self):
        self.framing_state = super()._framing_state()
        return self.framing_state


class ObservedOutputUnit(OutputUnit):
    """An :class:`OutputUnit` that keeps its credit counters (``spare``, per output VC), on a
    bubble port the packets it counts downstream (``packets_out[w]``: the queue of last marks, an
    :class:`ObservedFlitBuffer`, and the registers ``(packets, drained)``) and, on a PE port,
    its ejection buffer (``eject``, an :class:`ObservedFlitBuffer`)."""

    eject = None
    spare = ()
    packets_out = {}
    flit_buffer = ObservedFlitBuffer

    def _packets_out(self, m, w: int, returned):
        marks, registers, following = super()._packets_out(m, w, returned)
        self.packets_out = {**self.packets_out, w: (marks, registers)}
        return marks, registers, following

    def _credit_counter(self, m, w: int, returned):
        spare, following = super()._credit_counter(m, w, returned)
        return self.keep(spare), following

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


class ObservedIslipAllocator(IslipAllocator):
    """An :class:`IslipAllocator` that keeps its pointers: ``grant_pointers[o]``, the inputs
    after the last output ``o`` matched in a first round, and ``accept_pointers[i]``, the
    outputs after the last input ``i`` accepted in one (none with ``one_request``); and its
    first round's matches: ``first_match[o]``, the input output ``o`` matched there
    (one-hot, or zero), and ``first_accepted[i]``, the output input ``i`` accepted."""

    def _pointers(self):
        self.grant_pointers, self.accept_pointers = super()._pointers()
        return self.grant_pointers, self.accept_pointers

    def _move_pointers(self, m, grant_above, match, accept_above, accepted=()):
        self.first_match, self.first_accepted = list(match), list(accepted)
        super()._move_pointers(m, grant_above, match, accept_above, accepted)


class ObservedSplitComposition(SplitComposition):
    """A :class:`SplitComposition` that hands itself to ``observer`` once built and keeps its
    allocator (``allocator``), grants (``grants``) and, with broadcast, the outputs a
    broadcast takes (``copy_take``)."""

    packet_allocator = ObservedPacketAllocator
    islip_allocator = ObservedIslipAllocator

    def __init__(self, stage, m, vcs, outputs, *, observer):
        super().__init__(stage, m, vcs, outputs)
        observer.append(self)

    def _allocation(self):
        self.grants, self.copy_take = super()._allocation()
        self.allocator = self.m.submodules.packet_allocator
        return self.grants, self.copy_take


class ObservedVCAllocator(VCAllocator):
    """A :class:`VCAllocator` of :class:`ObservedArbiter` that keeps them: per input port,
    ``vc_arbiters[p]`` (which of its VCs it puts forward), per output ``port_arbiters[o]``."""

    arbiter = ObservedArbiter

    def elaborate(self, platform):
        m = super().elaborate(platform)
        self.vc_arbiters = [m.submodules[f"vc_{p}"] for p in range(len(self.vc_counts))]
        self.port_arbiters = [m.submodules[f"port_{o}"] for o in range(self.output_count)]
        return m


class ObservedSwitchAllocator(SwitchAllocator):
    """A :class:`SwitchAllocator` that keeps its matcher (``match``, an
    :class:`ObservedIslipAllocator`) and its arbiters (``vc_arbiters[o][p]``: which VC of
    crossbar input p crosses to output o)."""

    islip_allocator, arbiter = ObservedIslipAllocator, ObservedArbiter

    def elaborate(self, platform):
        m = super().elaborate(platform)
        self.match = m.submodules.islip
        self.vc_arbiters = [[m.submodules[f"vc_{o}_{p}"] for p in range(len(self.vc_counts))]
                            for o in range(self.output_count)]
        return m


class ObservedCompactComposition(CompactComposition):
    """A :class:`CompactComposition` that hands itself to ``observer`` once built and keeps,
    per output, the VC allocated in each cycle (``alloc``, one-hot) and, with broadcast, the
    outputs a broadcast takes (``copy_take``), per crossbar input the
    draining VC (``drain_sel``, one-hot), the switch allocation (``accepted``, ``read``) and
    its allocators (``vc_allocation``, an :class:`ObservedVCAllocator`;
    ``switch_allocation``, an :class:`ObservedSwitchAllocator`)."""

    vc_allocator, switch_allocator = ObservedVCAllocator, ObservedSwitchAllocator

    def __init__(self, stage, m, vcs, outputs, *, observer):
        super().__init__(stage, m, vcs, outputs)
        observer.append(self)

    def _vc_allocation(self):
        self.alloc = super()._vc_allocation()
        self.vc_allocation = self.m.submodules.vc_allocator
        return self.alloc

    def copy_allocation(self, requests):
        self.copy_take = super().copy_allocation(requests)
        return self.copy_take

    def _switch_requests(self):
        self.drain_sel = super()._switch_requests()
        return self.drain_sel

    def _switch_allocation(self):
        self.accepted, self.read = super()._switch_allocation()
        self.switch_allocation = self.m.submodules.switch_allocator
        return self.accepted, self.read


class ObservedEjectionMerger(EjectionMerger):
    """An :class:`EjectionMerger` that hands itself to ``observer`` (its registers are
    public: ``waiting``, ``streaming``, ``before``)."""

    @classmethod
    def check(cls, flit_width: int, lanes: int, *, observer):
        return super().check(flit_width, lanes)

    def __init__(self, flit_width: int, lanes: int, *, observer):
        super().__init__(flit_width, lanes)
        observer.append(self)


@dataclass
class Observed:
    """An elaborated :class:`FormalRouter`: its ``fragment``, its ``composition``
    (:class:`ObservedSplitComposition` or :class:`ObservedCompactComposition`), its
    ``inputs`` (:class:`ObservedInputUnit`, by port), ``outputs`` (:class:`ObservedOutputUnit`,
    by output: ports, then further ejection lanes) and ``mergers``
    (:class:`ObservedEjectionMerger`, by PE port with several lanes)."""

    fragment: Fragment
    composition: ObservedSplitComposition | ObservedCompactComposition
    inputs: list
    outputs: list
    mergers: dict


class FormalRouter(Router):
    """A :class:`Router` of observed stages."""

    input_unit = ObservedInputUnit
    output_unit = ObservedOutputUnit
    ejection_merger = ObservedEjectionMerger
    split_composition = ObservedSplitComposition
    compact_composition = ObservedCompactComposition

    def observe(self, platform) -> Observed:
        """Elaborate the router and return what its stages built."""
        inputs, compositions, mergers = [], [], []
        self.input_unit = functools.partial(type(self).input_unit, observer=inputs)
        self.split_composition = functools.partial(type(self).split_composition,
                                                   observer=compositions)
        self.compact_composition = functools.partial(type(self).compact_composition,
                                                     observer=compositions)
        self.ejection_merger = functools.partial(type(self).ejection_merger, observer=mergers)
        fragment = Fragment.get(self, platform)
        composition = compositions[0]
        merged = [p for p in self.config.pe_ports if len(self.config.lanes_of(p)) > 1]
        return Observed(fragment, composition, inputs, composition.outputs,
                        dict(zip(merged, mergers, strict=True)))


class RouterAlone(Elaboratable):
    """``router`` (a :class:`FormalRouter`) elaborated as its proof's harness elaborates it,
    its observed stages as module ``top.router``, but with none of the harness's properties
    or observation ports: two harnesses whose routers alone have the same netlist hold the
    same router (``bench/mutation.py`` carries verdicts across them)."""

    def __init__(self, router: FormalRouter):
        self.router = router

    def ports(self) -> list:
        """The router's own ports."""
        return [Value.cast(value) for _, _, value in self.router.signature.flatten(self.router)]

    def elaborate(self, platform):
        m = Module()
        m.submodules.router = self.router.observe(platform).fragment
        return m
