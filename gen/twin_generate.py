"""Generate a twin-torus network: Verilog files and a JSON manifest.

``generate(network, outdir)`` converts the card-0 and card-1 router modules once each, the
network top (which instantiates them by name) and writes ``<name>.manifest.json`` describing
the top's ports, the flit and header layout, the links and the parameters.
"""

import json
import time
from pathlib import Path

from twinnet.hdl import verilog
from twinnet.hdl.twin_card import card_router
from twinnet.hdl.twin_network import TwinNetwork, module_ports
from twinnet.model.network import TwinNetworkConfig

from . import output

MANIFEST_VERSION = 1


def generate(network: TwinNetworkConfig, outdir, *, trace: bool = False,
             progress=None) -> list[Path]:
    """Write the network's Verilog and manifest into ``outdir``; return the files written.

    The folder is built under a temporary name and appears whole only when everything is
    written (see :func:`twinnet.gen.output.staged`); files that did not change keep their time
    stamps, so a simulator build of the same network is reused. ``trace`` adds the link-trace
    outputs a testbench uses to follow every hop. ``progress``, if given, is called with one
    line of text per step.
    """
    outdir = Path(outdir)
    with output.staged(outdir) as stage:
        written = _write(network, stage, trace, progress or (lambda text: None))
    return [outdir / path.name for path in written]


def _write(network: TwinNetworkConfig, outdir: Path, trace: bool, say) -> list[Path]:
    files, card_modules, timings = [], {}, {}
    for card in range(network.topology.card_count):
        started = time.perf_counter()
        router = card_router(network, card)
        name = f"{network.name}_card{card}"
        path = outdir / f"{name}.v"
        path.write_text(verilog.convert(router, name=name))
        card_modules[card] = (name, router)
        files.append(path)
        timings[name] = time.perf_counter() - started
        say(f"card {card}: {path.name} ({timings[name]:.1f} s)")
    started = time.perf_counter()
    top = TwinNetwork(network, card_modules, trace=trace)
    path = outdir / f"{network.name}.v"
    path.write_text(verilog.convert(top, name=network.name))
    files.append(path)
    timings[network.name] = time.perf_counter() - started
    say(f"top: {path.name}, {network.topology.router_count} cards "
        f"({timings[network.name]:.1f} s)")
    manifest = outdir / f"{network.name}.manifest.json"
    manifest.write_text(json.dumps(describe(network, top, files), indent=2))
    files.append(manifest)
    return files


def describe(network: TwinNetworkConfig, top: TwinNetwork, files: list[Path]) -> dict:
    """The manifest: everything another tool needs to drive the generated Verilog."""
    twin, width = network.topology, network.flit_width
    _, router = top.card_modules[0]
    layout = router.flit_format.describe()
    return {
        "manifest_version": MANIFEST_VERSION,
        "top": network.name,
        "files": [f.name for f in files],
        "clock": "clk (rising edge)", "reset": "rst (synchronous, active high)",
        "parameters": network.to_dict(),
        "derived": {"pe_count": twin.pe_count, "node_count": twin.node_count,
                    "buffer_depth": network.depth},
        "ports": [{"name": name, "direction": "input" if d == "i" else "output",
                   "width": size} for name, d, size in module_ports(top)],
        "pe_protocol": {
            "order": f"PE i = pe + {twin.card_count} * (node index), node index = digits in "
                     "mixed radix with o0 most significant "
                     "(twinnet.model.twin.TwinTorusConfig.pe_index)",
            "bus_slicing": "1-bit buses: bit i belongs to PE i; data buses: bits "
                           f"[i*{width}, (i+1)*{width})",
            "handshake": "valid/ready; a flit moves when valid and ready are both high; "
                         "valid must not wait for ready; packets are "
                         f"{network.packet_length} flits, first on the head, last on the tail",
        },
        "head_flit": {
            "width": width,
            "fields": layout["head"],
            "route": "route.node.o<i> are the destination node's digits, route.pe its PE",
            "malformed": "a destination digit >= its radix (or route.pe = 1 on a plain torus, "
                         "one PE per node): the packet is dropped at "
                         "injection and counted on drop_count",
        },
        "body_flit": {"width": width, "fields": [{"name": "payload", "offset": 0,
                                                  "width": width}]},
        "cards": {str(card): name for card, (name, _) in top.card_modules.items()},
        "links": [link.describe() for link in top.links],
        "trace": ({"valid": "trace_valid", "flit": "trace_flit", "stride": top.trace_stride,
                   "layout": [{"name": "data", "offset": 0, "width": width},
                              {"name": "first", "offset": width, "width": 1},
                              {"name": "last", "offset": width + 1, "width": 1},
                              {"name": "vc", "offset": width + 2, "width": top.vc_bits}]}
                  if top.trace else None),
    }
