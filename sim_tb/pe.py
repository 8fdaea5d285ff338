"""cocotb driver and monitor for a router's PE ports (valid/ready streams of whole packets).

The driver writes on the falling clock edge and then reads ``ready`` in the read-only phase of
the same time step, so it is right even if ``ready`` depended on ``valid`` or the payload; the
transfer happens at the next rising edge when both are high. The monitor reads ``valid`` and
the payload on the falling edge (a stream's valid never waits for ready) and drives ``ready``.
"""

import random
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly

from .layout import Fields


class PeDriver:
    """Injects packets into a router's PE input ``prefix`` (e.g. ``"in_4"``).

    Parameters:
        fields: the injection payload fields (``describe()["ports"][i]["in"]``).
        idle: probability of leaving a cycle empty between flits (valid, once raised, stays
            up until the flit is taken).

    Each packet goes with ``send(vc, flits)``; ``vc`` fills the payload's ``vc`` field.
    """

    def __init__(self, dut, clock, prefix: str, fields: Fields, *, idle: float = 0.0,
                 rng: random.Random | None = None):
        self.clock, self.fields, self.idle = clock, fields, idle
        self.rng = rng or random.Random()
        self.valid = getattr(dut, f"{prefix}__valid")
        self.ready = getattr(dut, f"{prefix}__ready")
        self.payload = getattr(dut, f"{prefix}__payload")
        self.queue = deque()  # flit words, in order
        self.errors: list[str] = []
        self.sent_flits = 0
        self.valid.value = 0
        self.payload.value = 0

    def send(self, vc: int, flits: list[int]) -> None:
        for index, data in enumerate(flits):
            values = {"data": data, "first": int(index == 0), "last": int(index == len(flits) - 1)}
            if "vc" in self.fields:
                values["vc"] = vc
            self.queue.append(self.fields.pack(values))

    @property
    def idle_now(self) -> bool:
        return not self.queue

    def start(self):
        return cocotb.start_soon(self._run())

    async def _run(self):
        holding = False
        while True:
            await FallingEdge(self.clock)
            if not holding:
                if self.queue and self.rng.random() >= self.idle:
                    self.payload.value = self.queue[0]
                    self.valid.value = 1
                    holding = True
                else:
                    self.valid.value = 0
                    continue
            await ReadOnly()
            if int(self.ready.value):
                self.queue.popleft()
                self.sent_flits += 1
                holding = False


class PeMonitor:
    """Ejects packets from a router's PE output ``prefix`` (e.g. ``"out_4"``).

    Parameters:
        ready: probability of raising ready in a cycle (random back-pressure).
        on_packet: called as ``on_packet(0, flits)`` per complete packet.
        on_head: called as ``on_head(0, data)`` per head flit.

    Checks (``errors``): every packet starts with ``first`` and ends with ``last``.
    """

    def __init__(self, dut, clock, prefix: str, fields: Fields, *, ready: float = 1.0,
                 on_packet=None, on_head=None, rng: random.Random | None = None):
        self.clock, self.fields, self.ready_rate = clock, fields, ready
        self.on_packet, self.on_head = on_packet, on_head
        self.rng = rng or random.Random()
        self.valid = getattr(dut, f"{prefix}__valid")
        self.ready = getattr(dut, f"{prefix}__ready")
        self.payload = getattr(dut, f"{prefix}__payload")
        self.open = None
        self.errors: list[str] = []
        self.received_flits = 0
        self.ready.value = 0

    def start(self):
        return cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await FallingEdge(self.clock)
            take = self.rng.random() < self.ready_rate
            self.ready.value = int(take)
            if take and int(self.valid.value):
                self._receive(self.fields.unpack(int(self.payload.value)))

    def _receive(self, flit: dict) -> None:
        self.received_flits += 1
        if flit["first"]:
            if self.open is not None:
                self.errors.append("a head flit arrived inside another packet")
            self.open = []
            if self.on_head is not None:
                self.on_head(0, flit["data"])
        elif self.open is None:
            self.errors.append("a body flit arrived outside a packet")
            return
        self.open.append(flit["data"])
        if flit["last"]:
            flits, self.open = self.open, None
            if self.on_packet is not None:
                self.on_packet(0, flits)
