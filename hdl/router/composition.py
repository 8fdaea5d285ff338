"""What every microarchitecture's composition of the router's stages shares."""

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Mux, Signal
from amaranth.lib import data

from ..arbiter import RoundRobinArbiter
from ..onehot import lowest
from .request_unit import RequestUnit
from .stage_config import StageConfig
from .stalls import stall_bits_layout


@dataclass
class InputVC:
    """One input VC as a composition sees it.

    Attributes:
        name: ``"<port>_<vc>"``, for signal names.
        port: its input unit's :class:`~.input_unit.InputVCSignature` interface.
        request: its :class:`~.request_unit.RequestUnit`.
        state: its registers (a view of the composition's :meth:`Composition.state_layout`).
        control: its combinational signals (a view of :meth:`Composition.control_layout`).
    """

    name: str
    port: object
    request: RequestUnit
    state: data.View
    control: data.View


@dataclass
class FreeState:
    """The output units' free VCs and what the requests derive from them.

    Attributes:
        one, two: per output, the VCs free for one / two whole packets (its unit's masks).
        one_all, two_all: the same, one VC mask per output in one signal.
        adaptive: adaptive routing only: bit o, output o has an adaptive VC free for a whole
            packet (else None).
        adaptive_vc: with multiple requests only (:attr:`StageConfig.multiple_requests`):
            per output, its lowest adaptive VC free for a whole packet (one-hot), the VC an
            adaptive move there takes (else None).
        copy_vc: broadcast only: the VC a copy takes at each output (VC 0 of a single-VC
            port, e.g. a PE's).
        copy_one, copy_two: broadcast only: bit o, that VC is free for one / two packets.
    """

    one: list
    two: list
    one_all: data.View
    two_all: data.View
    adaptive: Signal | None = None
    adaptive_vc: list | None = None
    copy_vc: list | None = None
    copy_one: Signal | None = None
    copy_two: Signal | None = None


class Composition:
    """The stages of one router joined in one microarchitecture.

    Parameters:
        stage: the router's :class:`StageConfig`.
        m: the router's module.
        vcs: per input port, its input unit's ``vcs`` interfaces
            (:class:`~.input_unit.InputVCSignature`).
        outputs: the :class:`~.output_unit.OutputUnit` of each output
            (:attr:`~twinnet.hdl.config.RouterConfig.outputs`: the ports, then the further
            ejection lanes of PE ports).

    A subclass declares the registers and the combinational signals it keeps per input VC
    (:meth:`state_layout`, :meth:`control_layout`); each input VC is then an :class:`InputVC`
    with a :class:`RequestUnit`. :meth:`build` adds the allocators, per-VC control and the
    crossbar, and returns the signals that are set when a malformed packet's head is dropped.
    """

    def __init__(self, stage: StageConfig, m, vcs: list, outputs: list):
        self.stage, self.m, self.outputs = stage, m, outputs
        self.config = stage.config
        self.fanout = stage.broadcast_vc is not None
        self.free = self._free_state()
        self.vcs = []
        for p, ports in enumerate(vcs):
            self.vcs.append([])
            for v, port in enumerate(ports):
                name = f"{p}_{v}"
                request = m.submodules[f"request_{name}"] = RequestUnit(stage)
                self.vcs[p].append(InputVC(
                    name, port, request, Signal(self.state_layout(), name=f"state_{name}"),
                    Signal(self.control_layout(), name=f"control_{name}")))
        self.flat = [vc for port_vcs in self.vcs for vc in port_vcs]

    def state_layout(self) -> data.StructLayout:
        """The registers of one input VC."""
        raise NotImplementedError

    def control_layout(self) -> data.StructLayout:
        """The combinational signals of one input VC."""
        raise NotImplementedError

    def build(self) -> list:
        raise NotImplementedError

    # What the stall counters (:mod:`.stalls`) ask of a microarchitecture, per input VC.

    def head_waiting(self, vc: InputVC):
        """Its next packet (not a malformed one) could be allocated now."""
        raise NotImplementedError

    def head_granted(self, vc: InputVC):
        """Its next packet is allocated now."""
        raise NotImplementedError

    def head_asked(self, vc: InputVC):
        """It asked for an output that could take its packet now."""
        raise NotImplementedError

    def route_held(self, vc: InputVC):
        """The output of its route (every output of a broadcast's) carries other packets on
        every VC the route allows there."""
        raise NotImplementedError

    def switch_lost(self, vc: InputVC):
        """An allocated packet's front flit lost switch allocation."""
        raise NotImplementedError

    def stall_bits(self, vc: InputVC) -> data.View:
        """This cycle's stall bits of ``vc`` (:data:`.stalls.stall_bits_layout`)."""
        m, free, route = self.m, self.free, vc.port.route
        bits = Signal(stall_bits_layout, name=f"stall_{vc.name}")
        waiting = self.head_waiting(vc)
        lost = waiting & ~self.head_granted(vc)
        asked, held = self.head_asked(vc), self.route_held(vc)
        if "waiting" in vc.request.signature.members:  # its grade's outputs are all held
            held = held | vc.request.waiting
        room = (route.mask & free.one_all[route.port]).any()
        if self.fanout:
            room = Mux(route.multi, ~(route.targets & ~free.copy_one).any(), room)
        rest = lost & ~asked & ~held
        m.d.comb += [bits.heads.eq(waiting), bits.arbitration.eq(lost & asked),
                     bits.output.eq(lost & ~asked & held), bits.credits.eq(rest & ~room),
                     bits.bubble.eq(rest & room), bits.switch.eq(self.switch_lost(vc))]
        return bits

    def waits(self) -> list:
        """Per output ``o``, one bit per VC ``w`` of it: a packet that could be allocated now
        and was not (a stall of :mod:`.stalls`, whatever its reason) takes VC ``w`` of output
        ``o`` by its route (its escape move under adaptive routing; a broadcast's copy VC at
        each of its outputs)."""
        m, config = self.m, self.config
        waits = []
        for o, count in enumerate(config.output_vc_counts):
            bits = Const(0, count)
            for vc in self.flat:
                route = vc.port.route
                lost = self.head_waiting(vc) & ~self.head_granted(vc)
                here, mask = route.port == o, route.mask[:count]
                if self.fanout:
                    here = Mux(route.multi, route.targets[o], here)
                    mask = Mux(route.multi, 1 << self.free.copy_vc[o], mask)
                bits = bits | Mux(lost & here, mask, 0)
            waiting = Signal(count, name=f"waits_{o}")
            m.d.comb += waiting.eq(bits)
            waits.append(waiting)
        return waits

    def _free_state(self) -> FreeState:
        m, config, stage = self.m, self.config, self.stage
        one = self.per_port([unit.free_one for unit in self.outputs])
        two = self.per_port([unit.free_two for unit in self.outputs])
        free = FreeState(one, two, Signal(stage.port_vc_masks_layout, name="free_one_all"),
                         Signal(stage.port_vc_masks_layout, name="free_two_all"))
        m.d.comb += [free.one_all[o].eq(mask) for o, mask in enumerate(one)]
        m.d.comb += [free.two_all[o].eq(mask) for o, mask in enumerate(two)]
        if stage.adaptive_vcs:
            free.adaptive = Signal(config.port_count, name="adaptive_free")
            m.d.comb += free.adaptive.eq(Cat((f & stage.adaptive_vcs).any() for f in one))
        if stage.multiple_requests:
            free.adaptive_vc = [Signal(config.max_vc_count, name=f"adaptive_vc_{o}")
                                for o in range(config.port_count)]
            m.d.comb += [vc.eq(lowest(f & stage.adaptive_vcs, config.max_vc_count))
                         for vc, f in zip(free.adaptive_vc, one)]
        if self.fanout:
            free.copy_vc = [min(stage.broadcast_vc, port.output_vc_count - 1)
                            for port in config.ports]
            free.copy_one = Signal(config.port_count, name="copy_free_one")
            free.copy_two = Signal(config.port_count, name="copy_free_two")
            m.d.comb += [free.copy_one.eq(Cat(one[o][w] for o, w in enumerate(free.copy_vc))),
                         free.copy_two.eq(Cat(two[o][w] for o, w in enumerate(free.copy_vc)))]
        return free

    def per_port(self, values: list) -> list:
        """Per port, the OR of ``values`` (one per output) over its outputs: a PE port with
        several ejection lanes offers what any of its lanes offers."""
        combined = []
        for port in range(self.config.port_count):
            lanes = [values[o] for o in self.config.lanes_of(port)]
            value = lanes[0]
            for lane in lanes[1:]:
                value = value | lane
            combined.append(value)
        return combined

    def ask(self, vc: InputVC, ready, open_=None) -> None:
        """Drive ``vc``'s request unit: its next packet may be allocated when ``ready``
        (adaptive routing in the split router: to an output of ``open_``)."""
        m, free, request = self.m, self.free, vc.request
        m.d.comb += [request.route.eq(vc.port.route), request.ready.eq(ready),
                     request.free_one.eq(free.one_all), request.free_two.eq(free.two_all)]
        if self.stage.adaptive_vcs:
            m.d.comb += request.adaptive_free.eq(free.adaptive)
        if open_ is not None:
            m.d.comb += request.open.eq(open_)
        if self.fanout:
            m.d.comb += [request.copy_one.eq(free.copy_one), request.copy_two.eq(free.copy_two)]

    def copy_allocation(self, requests):
        """Broadcast allocation, before unicast: one broadcast per cycle (round robin over
        every input VC) among ``requests`` takes all its outputs; drives each VC's
        ``control.copy_grant`` and returns the outputs taken (bit o)."""
        m, port_count = self.m, self.config.port_count
        copy_arb = m.submodules["va_copy"] = RoundRobinArbiter(len(self.flat))
        m.d.comb += [copy_arb.requests.eq(requests), copy_arb.advance.eq(1)]
        take_bits = Const(0, port_count)
        for i, vc in enumerate(self.flat):
            m.d.comb += vc.control.copy_grant.eq(copy_arb.grant[i])
            take_bits = take_bits | Mux(copy_arb.grant[i], vc.port.route.targets, 0)
        copy_take = Signal(port_count, name="copy_take")
        m.d.comb += copy_take.eq(take_bits)
        return copy_take

    def drive_output(self, o: int, valid, sent, vc) -> None:
        """Output ``o``: flit ``sent`` (data, first, last, abort) leaves on VC ``vc`` when
        ``valid``."""
        unit = self.outputs[o]
        self.m.d.comb += [
            unit.flit.valid.eq(valid), unit.flit.payload.data.eq(sent.data),
            unit.flit.payload.first.eq(sent.first), unit.flit.payload.last.eq(sent.last),
            unit.flit.payload.abort.eq(sent.abort), unit.flit.payload.vc.eq(vc)]
