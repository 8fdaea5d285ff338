"""The C++ traffic program's reading of its models' Verilog (:mod:`twinnet.program.verilog`):
which inputs reach an output within a cycle, and the models' registers on both clock edges.

The small modules below are written the way Yosys writes Amaranth's designs (escaped names,
``always @*`` blocks, registers in ``always @(posedge clk)``, constant bit ranges assigned
part by part, submodules by name); the expected paths are read off them by hand.
"""

import json

import pytest

from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.program.verilog import (
    BOTH,
    UnreadableVerilog,
    both_edges,
    inputs_reaching_outputs,
    paths_within_a_cycle,
)

#: ``q`` is a register of ``d``; ``y`` is ``a`` through an ``always @*`` block chosen by ``s``;
#: ``z`` is ``b`` through an assign; ``w`` reads only the part of ``\\$1`` that the register
#: drives (the other part is ``c``).
FLAT = r"""
module top(clk, d, a, b, c, s, q, y, z, w);
  input clk;
  input [3:0] d;
  input a;
  input b;
  input [3:0] c;
  input s;
  output [3:0] q;
  reg [3:0] q = 4'h0;
  output y;
  reg y;
  output z;
  wire z;
  output w;
  wire [4:0] \$1 ;
  (* init = 4'h0 *)
  always @(posedge clk)
    q <= d;
  always @* begin
    if (\$auto$verilog_backend.cc:2355:dump_module$1 ) begin end
    y = 1'h0;
    casez (s)
      1'h1:
          y = a;
    endcase
  end
  assign z = ~ b;
  assign \$1 [4] = q[0];
  assign \$1 [3:0] = c;
  assign w = \$1 [4];
endmodule
"""

#: ``inner`` passes ``i`` to ``o`` and registers ``r`` into ``p``; ``outer`` uses it twice,
#: once with a register between, and an unknown cell ``black`` joining ``e`` and ``g``.
NESTED = r"""
module \outer (clk, x, u, e, f, g, h);
  input clk;
  input x;
  input u;
  input e;
  output f;
  output g;
  output h;
  wire m;
  \outer.inner  first (
    .clk(clk),
    .i(x),
    .r(u),
    .o(f),
    .p(m)
  );
  \outer.inner  second (
    .clk(clk),
    .i(m),
    .r(x),
    .o(h),
    .p()
  );
  black cell (
    .a(e),
    .b(g)
  );
endmodule

module \outer.inner (clk, i, r, o, p);
  input clk;
  input i;
  input r;
  output o;
  output p;
  reg p = 1'h0;
  assign o = i;
  always @(posedge clk)
    p <= r;
endmodule
"""


def test_registers_cut_paths_and_parts_are_followed_apart():
    """``a`` reaches ``y`` (under ``s``, which reaches it too), ``b`` reaches ``z``; ``d`` stops
    at the register ``q``, and ``c`` drives only the part of ``\\$1`` that ``w`` does not read.
    ``always @(*)`` reads as ``always @*`` (not as an attribute)."""
    assert inputs_reaching_outputs(FLAT, "top") == {"a", "s", "b"}
    assert inputs_reaching_outputs(FLAT.replace("always @*", "always @(*)"), "top") == \
        {"a", "s", "b"}


def test_submodules_pass_on_their_own_paths():
    """``x`` reaches ``f`` through ``first``; ``u`` is registered in ``first`` and ``second``'s
    ``o`` is driven by that register, so ``u`` reaches nothing; the unknown cell joins ``e`` to
    ``g``."""
    assert inputs_reaching_outputs(NESTED, "outer") == {"x", "e"}


def test_what_it_cannot_read_raises():
    with pytest.raises(UnreadableVerilog, match="no module nowhere"):
        inputs_reaching_outputs(FLAT, "nowhere")
    with pytest.raises(UnreadableVerilog, match=r"always @\(s\) in top"):
        inputs_reaching_outputs(FLAT.replace("always @*", "always @(s)"), "top")
    with pytest.raises(UnreadableVerilog, match="not by port name"):
        inputs_reaching_outputs(NESTED.replace(".i(x),", "x,"), "outer")


def test_both_edges_takes_every_register_on_both_edges():
    doubled = both_edges(NESTED)
    assert doubled.count(BOTH) == 1 and "always @(posedge clk)\n" not in doubled
    assert doubled.replace(BOTH, "always @(posedge clk)") == NESTED
    with pytest.raises(UnreadableVerilog, match=r"always @\(posedge clk, posedge rst\)"):
        both_edges(NESTED.replace("always @(posedge clk)", "always @(posedge clk, posedge rst)"))


def test_the_generated_models_have_no_path_through_a_router(tmp_path):
    """On the 4x4 torus's generated Verilog: no input of the router reaches an output within a
    cycle (its links' flits are registered, its credits and its PE port's ready come from
    registers); the source's data depends on its ``constants`` (the head carries the source's
    number) and its ``trace_ready`` on ``from_trace``, the sink's ready on ``refuse_rate`` (its
    refusals), and on nothing else."""
    from twinnet.gen.generate import generate_network

    network = TwinNetworkConfig.from_dict({"radices": [4, 4], "configuration": "torus",
                                           "mode": "vc"})
    files = generate_network(network, tmp_path, traffic=True, harness=False)
    manifest = json.loads(files[-1].read_text())
    (router,) = set(manifest["modules"].values())
    source, sink = manifest["traffic"]["modules"]
    found = {module: inputs_reaching_outputs((tmp_path / f"{module}.v").read_text(), module)
             for module in (router, source, sink)}
    assert found == {router: set(), source: {"constants", "from_trace"},
                     sink: {"refuse_rate"}}


@pytest.mark.parametrize("bypass", [True, False])
def test_with_stall_counters_only_the_waits_are_reached_from_a_link(tmp_path, bypass):
    """With the stall counters, the same router's ``waits`` say which output VCs a packet
    that could be allocated now and was not would take. With the bypass, a head arriving on
    a link counts from its arrival cycle: each link's flit (its valid and payload, and the
    node's constants its route is computed from) reaches every ``waits`` output within the
    cycle, and no other output (the links' flits and credits stay registers, so the traffic
    program's ranks still exchange registers' values). Without the bypass nothing does."""
    from twinnet.gen.generate import generate_network

    network = TwinNetworkConfig.from_dict({"radices": [4, 4], "configuration": "torus",
                                           "mode": "vc", "bypass": bypass})
    files = generate_network(network, tmp_path, traffic=True, stalls=True, harness=False)
    manifest = json.loads(files[-1].read_text())
    (router,) = set(manifest["modules"].values())
    paths = paths_within_a_cycle((tmp_path / f"{router}.v").read_text(), router)
    links = range(4)  # ports 0-3 are the torus's links, port 4 the PE's
    links_in = {f"in_{p}__flit__{part}" for p in links for part in ("valid", "payload")}
    reached = {output: inputs for output, inputs in paths.items() if inputs}
    assert reached == ({f"waits__out_{o}": links_in | {"node_static"} for o in range(5)}
                       if bypass else {})
