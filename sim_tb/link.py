"""cocotb driver and monitor for router-to-router links (see :mod:`twinnet.hdl.flit`).

Both sample and drive once per cycle on the falling clock edge: the router's link outputs
are registered (flits) or combinational from registers (the split router's credits), so at
the falling edge they show this cycle's value, and what is written there is sampled at the
next rising edge.
"""

import random
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge

from .layout import Fields


def _handle(dut, name):
    return getattr(dut, name) if hasattr(dut, name) else None


class LinkDriver:
    """Sends packets into a router's link input ``prefix`` (e.g. ``"in_0"``) under credits.

    Parameters:
        dut, clock: the cocotb top and its clock.
        prefix: the Verilog name prefix of the link input.
        fields: the link flit payload fields (``describe()["ports"][i]["in"]``).
        vc_count, depth: the router's input VCs on that port and its buffer depth per VC
            (the driver starts with ``depth`` credits per VC).
        max_packet_length: flits per packet; a packet starts only with credits for all of it
            (as a virtual cut-through upstream router would).
        idle: probability of sending nothing in a cycle where a flit could go.
        rng: a ``random.Random`` (for reproducible runs).

    Checks: the router never returns more credits than ``depth`` for a VC (``errors``).
    """

    def __init__(self, dut, clock, prefix: str, fields: Fields, *, vc_count: int, depth: int,
                 max_packet_length: int, idle: float = 0.0, rng: random.Random | None = None):
        self.clock, self.fields = clock, fields
        self.vc_count, self.depth, self.length, self.idle = vc_count, depth, max_packet_length, idle
        self.rng = rng or random.Random()
        self.valid = getattr(dut, f"{prefix}__flit__valid")
        self.payload = getattr(dut, f"{prefix}__flit__payload")
        self.credit_valid = getattr(dut, f"{prefix}__credit__valid")
        self.credit_vc = _handle(dut, f"{prefix}__credit__payload")
        self.credits = [depth] * vc_count
        self.queues = [deque() for _ in range(vc_count)]  # packets (lists of data words)
        self.current = [None] * vc_count  # (packet, next flit index) being sent per VC
        self.errors: list[str] = []
        self.sent_flits = 0
        self.valid.value = 0
        self.payload.value = 0

    def send(self, vc: int, flits: list[int]) -> None:
        """Queue a packet (its data words) on input VC ``vc``."""
        self.queues[vc].append(flits)

    @property
    def idle_now(self) -> bool:
        return not any(self.queues) and not any(self.current)

    def start(self):
        return cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await FallingEdge(self.clock)
            if int(self.credit_valid.value):
                vc = int(self.credit_vc.value) if self.credit_vc is not None else 0
                self.credits[vc] += 1
                if self.credits[vc] > self.depth:
                    self.errors.append(f"VC {vc}: {self.credits[vc]} credits, more than the "
                                       f"buffer depth {self.depth}")
            ready = [vc for vc in range(self.vc_count) if self.credits[vc] > 0 and (
                self.current[vc] is not None or
                (self.queues[vc] and self.credits[vc] >= self.length))]
            if not ready or self.rng.random() < self.idle:
                self.valid.value = 0
                continue
            vc = self.rng.choice(ready)
            if self.current[vc] is None:
                self.current[vc] = (self.queues[vc].popleft(), 0)
            packet, index = self.current[vc]
            last = index == len(packet) - 1
            self.payload.value = self.fields.pack({"data": packet[index], "first": int(index == 0),
                                                   "last": int(last), **(
                                                       {"vc": vc} if "vc" in self.fields else {})})
            self.valid.value = 1
            self.credits[vc] -= 1
            self.sent_flits += 1
            self.current[vc] = None if last else (packet, index + 1)


class LinkMonitor:
    """Receives flits from a router's link output ``prefix`` (e.g. ``"out_2"``), acting as the
    downstream router's input buffers, and returns credits with random back-pressure.

    Parameters:
        dut, clock, prefix, fields: as for :class:`LinkDriver` (``fields`` of the output).
        vc_count, depth: the downstream buffers (VCs and flits per VC).
        release: probability per cycle of freeing one buffered flit (one credit per cycle,
            like a router); 1.0 drains as fast as the link allows. ``limit`` caps what a VC
            may still free (``limit[vc] = 0`` freezes its buffer, for admission tests).
        on_packet: called as ``on_packet(vc, flits)`` for each complete packet.
        on_head: called as ``on_head(vc, data)`` for each head flit, in arrival order.

    Checks (``errors``): the router never sends more flits on a VC than it has credits for
    (the buffer never overflows), every packet starts with ``first`` and ends with ``last``,
    and no two packets interleave on one VC.
    """

    def __init__(self, dut, clock, prefix: str, fields: Fields, *, vc_count: int, depth: int,
                 release: float = 1.0, on_packet=None, on_head=None,
                 rng: random.Random | None = None):
        self.clock, self.fields = clock, fields
        self.vc_count, self.depth, self.release = vc_count, depth, release
        self.on_packet, self.on_head = on_packet, on_head
        self.rng = rng or random.Random()
        self.valid = getattr(dut, f"{prefix}__flit__valid")
        self.payload = getattr(dut, f"{prefix}__flit__payload")
        self.credit_valid = getattr(dut, f"{prefix}__credit__valid")
        self.credit_vc = _handle(dut, f"{prefix}__credit__payload")
        self.buffers = [deque() for _ in range(vc_count)]
        self.open = [None] * vc_count  # flits of the packet being received per VC
        self.limit: dict[int, int] = {}
        self.errors: list[str] = []
        self.received_flits = 0
        self.cycle = 0
        self.credit_valid.value = 0
        if self.credit_vc is not None:
            self.credit_vc.value = 0

    def start(self):
        return cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await FallingEdge(self.clock)
            self.cycle += 1
            # Free a slot first, so a flit is never released in the cycle it arrives.
            candidates = [vc for vc in range(self.vc_count)
                          if self.buffers[vc] and self.limit.get(vc, 1) > 0]
            if candidates and self.rng.random() < self.release:
                vc = self.rng.choice(candidates)
                self.buffers[vc].popleft()
                if vc in self.limit:
                    self.limit[vc] -= 1
                self.credit_valid.value = 1
                if self.credit_vc is not None:
                    self.credit_vc.value = vc
            else:
                self.credit_valid.value = 0
            if int(self.valid.value):
                self._receive(int(self.payload.value))

    def _receive(self, word: int) -> None:
        flit = self.fields.unpack(word)
        vc = flit.get("vc", 0)
        self.received_flits += 1
        if vc >= self.vc_count:
            self.errors.append(f"flit on VC {vc}, but the link has {self.vc_count} VCs")
            return
        self.buffers[vc].append(flit["data"])
        if len(self.buffers[vc]) > self.depth:
            self.errors.append(f"VC {vc}: {len(self.buffers[vc])} flits buffered, more than the "
                               f"depth {self.depth}: the router sent without a credit")
        if flit["first"]:
            if self.open[vc] is not None:
                self.errors.append(f"VC {vc}: a head flit arrived inside another packet "
                                   f"(packets interleaved on one VC)")
            self.open[vc] = []
            if self.on_head is not None:
                self.on_head(vc, flit["data"])
        elif self.open[vc] is None:
            self.errors.append(f"VC {vc}: a body flit arrived outside a packet")
            return
        self.open[vc].append(flit["data"])
        if flit["last"]:
            flits, self.open[vc] = self.open[vc], None
            if self.on_packet is not None:
                self.on_packet(vc, flits)
