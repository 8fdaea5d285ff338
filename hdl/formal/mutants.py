"""Routers with one known bug each: every property set must be able to fail.

A mutant is a :class:`~.stages.FormalRouter` subclass that replaces one stage class by a
subclass overriding one method. :data:`MUTANTS` names them.
"""

from dataclasses import dataclass

from amaranth.hdl import Mux, Signal

from .. import onehot
from .stages import (
    FormalRouter,
    ObservedArbiter,
    ObservedInputUnit,
    ObservedOutputUnit,
    ObservedPacketAllocator,
    ObservedSplitComposition,
)


class OffByOneOutputUnit(ObservedOutputUnit):
    """Takes L - 1 credits for a packet of L flits."""

    def _credit_counter(self, m, w: int, returned):
        port = self.stage.config.ports[self.port_index]
        length = self.stage.config.packet_length
        spare = Signal(range(-length, port.buffer_depth - length + 1),
                       init=port.buffer_depth - length, name=f"spare_credits_{w}")
        m.d.sync += spare.eq(Mux(self.take[w], spare + returned - (length - 1),
                                 spare + returned))
        return self.keep(spare)


class TailDroppingInputUnit(ObservedInputUnit):
    """Never writes a packet's last flit into its buffer."""

    def _per_packet_route(self, m, vc_port, fifo, queue, write, stored, route):
        super()._per_packet_route(m, vc_port, fifo, queue, write & ~stored.last, stored, route)


class InterleavingComposition(ObservedSplitComposition):
    """Lets every output be allocated in every cycle, also while a packet holds it."""

    def _output_state(self) -> None:
        super()._output_state()
        self.m.d.comb += self.avail.eq(-1)


class FixedPriorityArbiter(ObservedArbiter):
    """Always grants the lowest requester: the others can starve."""

    def _rotating(self, m):
        above = super()._rotating(m)
        m.d.comb += self.grant.eq(onehot.lowest(self.requests, self.count))
        return above


class StarvingAllocator(ObservedPacketAllocator):
    arbiter = FixedPriorityArbiter


class StarvingComposition(ObservedSplitComposition):
    packet_allocator = StarvingAllocator


class CreditOffByOne(FormalRouter):
    output_unit = OffByOneOutputUnit


class TailDropped(FormalRouter):
    input_unit = TailDroppingInputUnit


class PacketsInterleave(FormalRouter):
    split_composition = InterleavingComposition


class ArbiterStarves(FormalRouter):
    split_composition = StarvingComposition


@dataclass(frozen=True)
class Mutant:
    """A named bug: ``router`` is the :class:`FormalRouter` subclass that has it."""

    name: str
    router: type
    text: str


#: The mutants by name.
MUTANTS = {mutant.name: mutant for mutant in [
    Mutant("credit-off-by-one", CreditOffByOne,
           "an output's credit counter takes L - 1 credits for a packet of L flits"),
    Mutant("tail-dropped", TailDropped,
           "an input unit never writes a packet's last flit into its buffer"),
    Mutant("packets-interleave", PacketsInterleave,
           "an output may be allocated to a second packet while one holds it"),
    Mutant("arbiter-starves", ArbiterStarves,
           "the packet allocator's port arbiters always grant the lowest port"),
]}
