"""iSLIP: a matching of inputs to outputs in rounds of request, grant and accept."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib.wiring import In, Out

from twinnet.model import checks
from twinnet.model.sizes import MAX_ITERATIONS

from .. import onehot
from ..checked import CheckedComponent


def first_after(m, requests, above, count: int, name: str):
    """:func:`twinnet.hdl.onehot.first_after` as a signal named ``name`` (``requests`` itself
    with one requester)."""
    if count == 1:
        return requests
    first = Signal(count, name=name)
    m.d.comb += first.eq(onehot.first_after(requests, above, count))
    return first


class IslipAllocator(CheckedComponent):
    """iSLIP (McKeown, "The iSLIP scheduling algorithm for input-queued switches", IEEE/ACM
    ToN 7(2), 1999) over ``input_count`` inputs and ``output_count`` outputs.

    Each cycle runs ``iterations`` rounds over the inputs and outputs still unmatched: every
    open output grants the requesting input that comes first from its grant pointer, and every
    input accepts the granting output that comes first from its accept pointer. Only matches
    of the first round move pointers: an output's grant pointer to the input after the one it
    matched, an input's accept pointer to the output after the one it accepted. So an output
    that keeps being asked for serves each requesting input within ``input_count`` of its
    first-round matches (later rounds only add matches, and move no pointer), and the first
    round is the separable round robin with iSLIP's pointer rule.

    Where each input asks for one output at most (``one_request``), an input is offered only
    the output it asks for and accepts it: an output's grant is its match, and every output
    asked for and open is matched in the first round, so later rounds find none. The
    allocator is then built as that first round's grant arbiters alone (no accept stage, no
    accept pointers), matching as the full rounds would in every cycle.

    Parameters:
        input_count: inputs (>= 1).
        output_count: outputs (>= 1).
        iterations: rounds per cycle, 1 to :data:`twinnet.model.sizes.MAX_ITERATIONS`.
        one_request: every input's ``requests`` has one bit set at most.

    Ports:
        requests: In(output_count).array(input_count) — bit o of input i: input i asks for
            output o (any number of bits).
        open: In(output_count) — bit o: output o may be matched this cycle.
        grants: Out(input_count).array(output_count) — one-hot (or zero): the input matched
            to output o; an input is matched to at most one output.
    """

    @classmethod
    def check(cls, input_count: int, output_count: int, iterations: int = 1,
              one_request: bool = False):
        checks.check_int("input_count", input_count, minimum=1)
        checks.check_int("output_count", output_count, minimum=1)
        checks.check_int("iterations", iterations, minimum=1, maximum=MAX_ITERATIONS)
        checks.check_choice("one_request", one_request, (False, True))

    def __init__(self, input_count: int, output_count: int, iterations: int = 1,
                 one_request: bool = False):
        self.input_count, self.output_count = input_count, output_count
        self.iterations, self.one_request = iterations, one_request
        super().__init__({"requests": In(output_count).array(input_count),
                          "open": In(output_count),
                          "grants": Out(input_count).array(output_count)})

    def _pointers(self) -> tuple[list, list]:
        """The round-robin pointers: per output, the inputs after the last it matched (its
        grant pointer); per input, the outputs after the last it accepted (none with
        ``one_request``: it has no accept stage)."""
        inputs, outputs = self.input_count, self.output_count
        return ([Signal(inputs, name=f"grant_above_{o}") for o in range(outputs)],
                [] if self.one_request else
                [Signal(outputs, name=f"accept_above_{i}") for i in range(inputs)])

    def _move_pointers(self, m, grant_above, match, accept_above, accepted=()):
        """The first round's pointer moves: output o's grant pointer to the inputs after
        ``match[o]`` (one-hot, the input it matched), input i's accept pointer to the outputs
        after ``accepted[i]`` (the output it accepted); a pointer without a match stays."""
        for above, chosen in zip(grant_above, match):
            with m.If(chosen.any()):
                m.d.sync += above.eq(onehot.after(chosen, self.input_count))
        for above, chosen in zip(accept_above, accepted):
            with m.If(chosen.any()):
                m.d.sync += above.eq(onehot.after(chosen, self.output_count))

    def elaborate(self, platform):
        m = Module()
        inputs, outputs = self.input_count, self.output_count
        grant_above, accept_above = self._pointers()
        free_in = Signal(inputs, name="free_in_0")
        free_out = Signal(outputs, name="free_out_0")
        m.d.comb += [free_in.eq(-1), free_out.eq(self.open)]
        matched = [0] * outputs
        for r in range(self.iterations):
            offered = [first_after(m, Cat(self.requests[i][o] & free_in[i] & free_out[o]
                                          for i in range(inputs)),
                                   grant_above[o], inputs, f"offer_{r}_{o}")
                       for o in range(outputs)]
            if self.one_request:
                self._move_pointers(m, grant_above, offered, [])
                matched = offered
                break
            accepted = [first_after(m, Cat(offered[o][i] for o in range(outputs)),
                                    accept_above[i], outputs, f"accept_{r}_{i}")
                        for i in range(inputs)]
            match = [Signal(inputs, name=f"match_{r}_{o}") for o in range(outputs)]
            m.d.comb += [match[o].eq(Cat(accepted[i][o] for i in range(inputs)))
                         for o in range(outputs)]
            if r == 0:
                self._move_pointers(m, grant_above, match, accept_above, accepted)
            matched = [each | new for each, new in zip(matched, match)]
            if r + 1 < self.iterations:
                next_in = Signal(inputs, name=f"free_in_{r + 1}")
                next_out = Signal(outputs, name=f"free_out_{r + 1}")
                m.d.comb += [next_in.eq(free_in & ~Cat(each.any() for each in accepted)),
                             next_out.eq(free_out & ~Cat(each.any() for each in match))]
                free_in, free_out = next_in, next_out
        m.d.comb += [self.grants[o].eq(matched[o]) for o in range(outputs)]
        return m
