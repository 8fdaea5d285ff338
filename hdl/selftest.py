"""A self-test top for boards: a network with traffic generators and checkers on every PE, a
pass/fail verdict and a UART report.

:class:`SelfTest` instantiates a network's traffic harness (the Verilog module
``<network>_traffic`` that ``twinnet gen`` writes with traffic, :class:`twinnet.hdl.traffic.
TrafficHarness`: a source and a sink per terminal, every packet checked for destination,
integrity and per-pair order), or, for a network built with AXI4-Stream interfaces, frame
sources and checkers on every PE's interfaces (:mod:`twinnet.hdl.axi_stream_traffic`: frames
counted in place of packets, beats in place of flits), and runs one round:

1. **run**: uniform traffic at ``rate`` for ``run_cycles`` cycles, of packets of every length
   from 1 flit to the routers' longest (uniform; ``lengths`` may give another mix);
2. **drain**: creation stops; the round passes when every created packet was injected and
   received (``received == injected == created > 0``) and no sink counted an error and no
   packet was dropped as malformed; it fails on any error, or when no packet is delivered
   for ``watchdog`` cycles with packets still in flight (a deadlock).

``passed`` / ``failed`` hold the verdict (for LEDs). The UART (8N1, ``divisor`` clock cycles
per bit) repeats one line, every ``report_cycles`` cycles::

    twinnet sent 0000012C recv 0000012C err 00000000 PASS

(counts in hexadecimal: packets created, packets received, errors plus malformed drops; the
last word ``RUN``, ``PASS`` or ``FAIL``).
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from twinnet.model.traffic import LengthMix

from .axi_stream_traffic import FrameTraffic
from .network import instantiate
from .traffic import FAULTS, RATE_BITS

#: The sink counters that count errors.
ERRORS = ("wrong_destination", "out_of_order", "corrupt", "framing", "aborted")
VERDICTS = ("RUN ", "PASS", "FAIL")


class UartTx(wiring.Component):
    """An 8N1 UART transmitter: bytes in on a valid/ready stream, ``tx`` out (idle high),
    ``divisor`` clock cycles per bit."""

    def __init__(self, divisor: int):
        if divisor < 1:
            raise ValueError(f"divisor must be >= 1 clock cycle per bit, not {divisor}")
        self.divisor = divisor
        super().__init__({"data": In(stream.Signature(8)), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        shift = Signal(10)  # stop bit, 8 data bits (LSB first), start bit
        bits_left = Signal(range(11))
        timer = Signal(range(self.divisor))
        m.d.comb += self.data.ready.eq(bits_left == 0)
        with m.If(self.data.valid & self.data.ready):
            m.d.sync += [shift.eq(Cat(Const(0, 1), self.data.payload, Const(1, 1))),
                         bits_left.eq(10), timer.eq(0)]
        with m.Elif(bits_left != 0):
            with m.If(timer == 0):
                m.d.sync += [self.tx.eq(shift[0]), shift.eq(shift >> 1),
                             timer.eq(self.divisor - 1)]
            with m.Else():
                m.d.sync += timer.eq(timer - 1)
            with m.If((timer == 1) | (self.divisor == 1)):
                m.d.sync += bits_left.eq(bits_left - 1)
        return m


def _hex_digit(nibble):
    return Mux(nibble < 10, ord("0") + nibble, ord("A") - 10 + nibble)


class SelfTest(wiring.Component):
    """One self-test round of a network's traffic harness (see the module docstring).

    Parameters:
        harness: the :class:`twinnet.hdl.traffic.TrafficHarness` (only its signature is used:
            it is instantiated as Verilog module ``module``), or, for a network with
            AXI4-Stream interfaces, a :class:`twinnet.hdl.axi_stream_traffic.FrameTraffic`
            (a submodule: frames instead of packets, its own fault; ``lengths`` unused).
        module: the harness's Verilog module name (``<network>_traffic``; None with frames).
        rate: packets per PE per cycle in the run phase, in units of 2^-16.
        run_cycles, watchdog, report_cycles: see the module docstring.
        divisor: clock cycles per UART bit.
        fault: a fault of :data:`twinnet.hdl.traffic.FAULTS` the harness injects once (to see
            the self-test fail), ``none`` on a board.
        lengths: the :class:`twinnet.model.traffic.LengthMix` of the packets (default: 1 to
            the routers' longest, uniform).

    Ports: ``passed``, ``failed``, ``done`` (the verdict), ``tx`` (the UART), and the counts
    ``created``, ``received`` (packets), ``flits`` (their flits), ``errors`` (for a
    testbench).
    """

    def __init__(self, harness, module: str | None, *, rate: int, run_cycles: int,
                 watchdog: int = 5000, report_cycles: int = 1 << 20, divisor: int = 217,
                 fault: str = "none", lengths: LengthMix | None = None):
        if isinstance(harness, FrameTraffic):  # its own lengths and fault
            lengths = None
        else:
            longest = harness.fmt.max_packet_length
            lengths = LengthMix([(1, longest)]) if lengths is None else lengths
            if lengths.longest > longest:
                raise ValueError(f"packet lengths up to {lengths.longest}: the routers' "
                                 f"longest packet is {longest} flits")
            if fault not in FAULTS:
                raise ValueError(f"fault must be one of {', '.join(FAULTS)}, not {fault!r}")
        for name, value, low in (("rate", rate, 1), ("run_cycles", run_cycles, 1),
                                 ("watchdog", watchdog, 16), ("divisor", divisor, 1)):
            if value < low:
                raise ValueError(f"{name} must be >= {low}, not {value}")
        self.harness, self.module = harness, module
        self.rate, self.run_cycles, self.watchdog = rate, run_cycles, watchdog
        self.report_cycles, self.divisor, self.fault = report_cycles, divisor, fault
        self.lengths = lengths
        super().__init__({"passed": Out(1), "failed": Out(1), "done": Out(1), "tx": Out(1),
                          "created": Out(32), "received": Out(32), "flits": Out(32),
                          "errors": Out(32)})

    def message(self):
        """The report line as a list of items: a character, or a 32-bit value shown as eight
        hexadecimal digits, or ``None`` for the verdict word."""
        items = list("twinnet sent ") + [self.created] + list(" recv ") + [self.received] + \
            list(" err ") + [self.errors] + [" "] + [None] + list("\r\n")
        return items

    def elaborate(self, platform):
        m = Module()
        if isinstance(self.harness, FrameTraffic):
            m.submodules.traffic = net = self.harness
            m.d.comb += [net.rate.eq(min(self.rate, (1 << len(net.rate)) - 1)),
                         self.created.eq(net.created), self.received.eq(net.received),
                         self.flits.eq(net.flits), self.errors.eq(net.errors)]
            self._round(m, net, net.errors)
            return m
        net = instantiate(m, "harness", self.module, self.harness)
        width = len(net.rate)
        m.d.comb += [net.rate.eq(min(self.rate, (1 << width) - 1)), net.pattern.eq(0),
                     net.seed.eq(1), net.measure.eq(1), net.fault.eq(FAULTS.index(self.fault)),
                     net.hotspot_rate.eq(0), net.onoff.eq(0)]
        for k, (lo, hi, cut) in enumerate(self.lengths.cuts(1 << RATE_BITS)):
            m.d.comb += [getattr(net, f"length_lo_{k}").eq(lo),
                         getattr(net, f"length_hi_{k}").eq(hi),
                         getattr(net, f"length_cut_{k}").eq(cut)]
        errors = sum((getattr(net, name) for name in ERRORS), net.drop_count)
        m.d.comb += [self.created.eq(net.created), self.received.eq(net.received),
                     self.flits.eq(net.flits_measured), self.errors.eq(errors)]
        self._round(m, net, errors)
        return m

    def _round(self, m, net, errors) -> None:
        """The round (run, drain, verdict) on ``net``'s ``enable`` and counts, and the
        report."""
        # ---- The round: run, drain, verdict. ----
        running = Signal(init=1)
        timer = Signal(range(max(self.run_cycles, self.watchdog) + 1))
        last_received = Signal(32)
        drained = (net.received == net.injected) & (net.injected == net.created) & \
            (net.created != 0)
        m.d.comb += net.enable.eq(running)
        with m.If(~self.done):
            with m.If(errors != 0):
                m.d.sync += [self.failed.eq(1), self.done.eq(1), running.eq(0)]
            with m.Elif(running):
                m.d.sync += timer.eq(timer + 1)
                with m.If(timer == self.run_cycles - 1):
                    m.d.sync += [running.eq(0), timer.eq(0)]
            with m.Elif(drained):
                m.d.sync += [self.passed.eq(1), self.done.eq(1)]
            with m.Elif(net.received != last_received):
                m.d.sync += [last_received.eq(net.received), timer.eq(0)]
            with m.Elif(timer == self.watchdog - 1):
                m.d.sync += [self.failed.eq(1), self.done.eq(1)]
            with m.Else():
                m.d.sync += timer.eq(timer + 1)

        # ---- The report: one character per UART byte, repeated. ----
        m.submodules.uart = uart = UartTx(self.divisor)
        m.d.comb += self.tx.eq(uart.tx)
        items = self.message()
        characters = []
        for item in items:
            if item is None:
                word = Mux(self.passed, Const(1, 2), Mux(self.failed, 2, 0))
                characters += [Array(Const(ord(text[i]), 8) for text in VERDICTS)[word]
                               for i in range(4)]
            elif isinstance(item, str):
                characters.append(Const(ord(item), 8))
            else:
                characters += [_hex_digit(item[4 * (7 - i):4 * (8 - i)]) for i in range(8)]
        index = Signal(range(len(characters) + 1))
        pause = Signal(range(self.report_cycles + 1))
        m.d.comb += [uart.data.payload.eq(Array(characters)[index]),
                     uart.data.valid.eq((index < len(characters)) & (pause == 0))]
        with m.If(uart.data.valid & uart.data.ready):
            m.d.sync += index.eq(index + 1)
        with m.If(index == len(characters)):
            m.d.sync += [index.eq(0), pause.eq(self.report_cycles)]
        with m.Elif((pause != 0) & uart.data.ready):
            # The pause starts once the last character has left.
            m.d.sync += pause.eq(pause - 1)
