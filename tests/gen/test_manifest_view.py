"""The manifest's typed view (:class:`twinnet.gen.manifest.Manifest`) reads what generation
wrote: checked on a 3x3 torus counted by hand (9 routers and PEs, 4 links out of each
router)."""

import json

from twinnet.cli.gen_cmd import network_from_words
from twinnet.families import family_for
from twinnet.gen.generate import generate_network
from twinnet.gen.manifest import Manifest


def test_the_view_of_a_torus_with_its_traffic_harness(tmp_path):
    network = network_from_words(["torus", "--radix", "3,3"])
    files = generate_network(network, tmp_path, family=family_for(network), traffic=True,
                             harness=False)
    data = json.loads(files[-1].read_text())
    view = Manifest.read(files[-1])
    assert view.data == data and view.family == "twin-torus"
    assert (view.pe_count, len(view.routers), len(view.terminals)) == (9, 9, 9)
    assert len(view.links) == 9 * 4
    assert view.max_packet_length == network.max_packet_length
    assert view.head_flit.width == network.flit_width
    offsets = view.head_flit.offsets()
    assert view.head_flit.has("source") and not view.head_flit.has("route.broadcast")
    assert all(0 <= offsets[name] < view.head_flit.width for name in offsets)
    traffic = view.traffic
    assert traffic.verilog is None and traffic.program is not None
    # The terminal digits number the 9 PEs: their radices multiply to 9.
    product = 1
    for _, radix in traffic.digits:
        product *= radix
    assert product == 9
    assert view.link_counters is None and view.axi_stream is None and view.trace is None
    assert Manifest.of(view) is view
