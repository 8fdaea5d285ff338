"""What every microarchitecture's composition of the router's stages shares."""

from amaranth.hdl import Cat, Const, Mux, Signal

from ..arbiter import RoundRobinArbiter
from .request_unit import RequestUnit
from .stage_config import StageConfig


class Composition:
    """The stages of one router joined in one microarchitecture.

    Parameters:
        stage: the router's :class:`StageConfig`.
        m: the router's module.
        vcs: per input port, per VC, a dict whose ``"in"`` is the input unit's
            :class:`~.input_unit.InputVCSignature` interface; the composition adds that VC's
            signals under other keys.
        outputs: the :class:`~.output_unit.OutputUnit` of each port.

    :meth:`build` adds the allocators, per-VC control and the crossbar, and returns the
    signals that are set when a malformed packet's head is dropped.
    """

    def __init__(self, stage: StageConfig, m, vcs: list[list[dict]], outputs: list):
        self.stage, self.m, self.vcs, self.outputs = stage, m, vcs, outputs
        self.config = stage.config
        self.fanout = stage.broadcast_vc is not None
        self.flat = [s for port_vcs in vcs for s in port_vcs]
        self.free = self._free_state()

    def build(self) -> list:
        raise NotImplementedError

    def _free_state(self) -> dict:
        """The output units' free masks (one per output, and all together as ``*_all``), and
        what the requests derive from them: with adaptive routing, bit o of
        ``adaptive_free``: output o has an adaptive VC free for a whole packet; with
        broadcast, the VC a copy takes at each output (``copy_vc``: VC 0 of a single-VC
        port, e.g. a PE's) and bit o of ``copy_one`` / ``copy_two``: that VC is free for one
        / two whole packets."""
        m, config, stage = self.m, self.config, self.stage
        free = {"free_one": [unit.free_one for unit in self.outputs],
                "free_two": [unit.free_two for unit in self.outputs]}
        for key in ("free_one", "free_two"):
            free[f"{key}_all"] = Signal(stage.port_vc_masks_layout, name=f"{key}_all")
            m.d.comb += [free[f"{key}_all"][o].eq(mask) for o, mask in enumerate(free[key])]
        if stage.adaptive_vcs:
            free["adaptive_free"] = Signal(config.port_count, name="adaptive_free")
            m.d.comb += free["adaptive_free"].eq(
                Cat((f & stage.adaptive_vcs).any() for f in free["free_one"]))
        if self.fanout:
            copy_vc = [min(stage.broadcast_vc, port.output_vc_count - 1) for port in config.ports]
            free["copy_vc"] = copy_vc
            free["copy_one"] = Signal(config.port_count, name="copy_free_one")
            free["copy_two"] = Signal(config.port_count, name="copy_free_two")
            m.d.comb += [
                free["copy_one"].eq(Cat(free["free_one"][o][w] for o, w in enumerate(copy_vc))),
                free["copy_two"].eq(Cat(free["free_two"][o][w] for o, w in enumerate(copy_vc)))]
        return free

    def requests(self, s: dict, name: str, ready, open_=None) -> None:
        """The :class:`RequestUnit` of input VC ``s``, whose next packet may be allocated when
        ``ready`` (adaptive routing in the split router: to an output of ``open_``); sets
        ``s``'s ``va_to`` (one-hot: the output it asks for), ``move_port``, ``w_sel``
        (one-hot: the output VC it would get) and, with broadcast, ``copy_req``."""
        m, free = self.m, self.free
        request = m.submodules[f"request_{name}"] = RequestUnit(self.stage)
        m.d.comb += [request.route.eq(s["in"].route), request.ready.eq(ready),
                     request.free_one.eq(free["free_one_all"]),
                     request.free_two.eq(free["free_two_all"])]
        if self.stage.adaptive_vcs:
            m.d.comb += request.adaptive_free.eq(free["adaptive_free"])
        if open_ is not None:
            m.d.comb += request.open.eq(open_)
        if self.fanout:
            m.d.comb += [request.copy_one.eq(free["copy_one"]),
                         request.copy_two.eq(free["copy_two"])]
            s["copy_req"] = request.copy
        s["va_to"], s["move_port"], s["w_sel"] = request.to, request.port, request.vc

    def copy_allocation(self, requests):
        """Broadcast allocation, before unicast: one broadcast per cycle (round robin over
        every input VC) among ``requests`` takes all its outputs; sets each VC's
        ``copy_grant`` and returns the outputs taken (bit o)."""
        m, port_count = self.m, self.config.port_count
        copy_arb = m.submodules["va_copy"] = RoundRobinArbiter(len(self.flat))
        m.d.comb += [copy_arb.requests.eq(requests), copy_arb.advance.eq(1)]
        take_bits = Const(0, port_count)
        for i, s in enumerate(self.flat):
            s["copy_grant"] = copy_arb.grant[i]
            take_bits = take_bits | Mux(copy_arb.grant[i], s["in"].route.targets, 0)
        copy_take = Signal(port_count, name="copy_take")
        m.d.comb += copy_take.eq(take_bits)
        return copy_take

    def drive_output(self, o: int, valid, sent, vc, take) -> None:
        """Output ``o``: flit ``sent`` (data, first, last) leaves on VC ``vc`` when ``valid``;
        ``take`` (one-hot) is the output VC whose L credits it takes."""
        unit = self.outputs[o]
        self.m.d.comb += [
            unit.flit.valid.eq(valid), unit.flit.payload.data.eq(sent.data),
            unit.flit.payload.first.eq(sent.first), unit.flit.payload.last.eq(sent.last),
            unit.flit.payload.vc.eq(vc), unit.take.eq(take)]
