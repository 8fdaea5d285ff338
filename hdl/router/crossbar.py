"""The crossbar: every output takes the input its one-hot select names."""

from amaranth.hdl import Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .. import onehot


class Crossbar(wiring.Component):
    """An AND-OR crossbar of ``input_count`` inputs and ``output_count`` outputs.

    Parameters:
        layout: what crosses (a ``data.StructLayout``).
        input_count, output_count: the numbers of inputs and outputs (>= 1).

    Ports:
        inputs: In(layout).array(input_count).
        select: In(input_count).array(output_count) — one-hot (or zero): the input output o
            takes. The allocators never select one input for two outputs unless it is meant
            to be copied (a broadcast).
        outputs: Out(layout).array(output_count) — the selected input, zero when none.
    """

    def __init__(self, layout: data.StructLayout, input_count: int, output_count: int):
        self.layout, self.input_count = layout, input_count
        super().__init__({"inputs": In(layout).array(input_count),
                          "select": In(input_count).array(output_count),
                          "outputs": Out(layout).array(output_count)})

    def elaborate(self, platform):
        m = Module()
        for select, output in zip(self.select, self.outputs):
            m.d.comb += output.eq(onehot.select(select, self.inputs, self.layout.size))
        return m
