"""Scoreboard: every packet arrives exactly once, intact, where it was sent, flows in order."""

from collections import defaultdict, deque
from dataclasses import dataclass


@dataclass(frozen=True)
class ExpectedPacket:
    """A packet the test sent: its flits, where it must arrive, and the flow it belongs to."""

    flits: tuple[int, ...]
    port: int
    vc: int
    flow: tuple


class Scoreboard:
    """Matches received packets against sent ones.

    Packets are identified by their head flit, which the test makes unique (e.g. a packet
    number in the payload). ``expect`` registers a sent packet; ``receive`` checks an arrival:
    known and not yet received, on the expected output port and VC, with identical flits, and
    the oldest outstanding packet of its flow (flows keep their order). Problems go to
    ``errors``; ``outstanding`` counts packets still in flight.
    """

    def __init__(self):
        self.pending: dict[int, ExpectedPacket] = {}
        self.flows: dict[tuple, deque] = defaultdict(deque)
        self.errors: list[str] = []
        self.received = 0
        self.received_by_flow: dict[tuple, int] = defaultdict(int)

    def expect(self, flits, *, port: int, vc: int, flow: tuple) -> None:
        flits = tuple(flits)
        if flits[0] in self.pending:
            raise ValueError(f"head flit {flits[0]:#x} is not unique; the test must make it so")
        self.pending[flits[0]] = ExpectedPacket(flits, port, vc, flow)
        self.flows[flow].append(flits[0])

    @property
    def outstanding(self) -> int:
        return len(self.pending)

    def receive(self, port: int, vc: int, flits) -> None:
        flits = tuple(flits)
        head = flits[0] if flits else None
        expected = self.pending.pop(head, None)
        if expected is None:
            self.errors.append(f"port {port} VC {vc}: unexpected or duplicate packet with head "
                               f"{head if head is None else hex(head)}")
            return
        self.received += 1
        self.received_by_flow[expected.flow] += 1
        if (port, vc) != (expected.port, expected.vc):
            self.errors.append(f"packet {head:#x} arrived on port {port} VC {vc}, expected port "
                               f"{expected.port} VC {expected.vc}")
        if flits != expected.flits:
            sent = [hex(f) for f in expected.flits]
            self.errors.append(f"packet {head:#x} corrupted: sent {sent}, received "
                               f"{[hex(f) for f in flits]}")
        order = self.flows[expected.flow]
        if order and order[0] != head:
            self.errors.append(f"flow {expected.flow}: packet {head:#x} overtook {order[0]:#x}")
        order.remove(head)
