"""Turn a generated network's manifest into the constants the example testbenches compile in.

Usage::

    python3 net_params.py MANIFEST > net_params.h   # the C++ header for tb_uniform.cpp
    python3 net_params.py --iverilog MANIFEST       # iverilog flags for tb_one_packet.v

Only the standard library and the manifest are read, so it runs without twinnet installed. The
head-flit offsets come from ``head_flit.fields`` (``route.node.o<i>``, ``route.pe``, ``source``,
``payload``); the PE numbering is the manifest's: ``PE = pe + cards * node index``, the node
index reading the digits as a mixed-radix number with ``o0`` most significant.
"""

import argparse
import json
import sys
from pathlib import Path


def load(manifest_path: Path) -> dict:
    """The constants both testbenches need, from the manifest at ``manifest_path``."""
    manifest = json.loads(manifest_path.read_text())
    fields = {f["name"]: (f["offset"], f["width"]) for f in manifest["head_flit"]["fields"]}
    radices = manifest["parameters"]["radices"]
    return {
        "top": manifest["top"],
        "pes": manifest["derived"]["pe_count"],
        "cards": manifest["twin-torus"]["card_count"],
        "flit_width": manifest["head_flit"]["width"],
        "max_packet_length": manifest["parameters"]["max_packet_length"],
        "radices": radices,
        "digits": [fields[f"route.node.o{dim}"] for dim in range(len(radices))],
        "pe": fields["route.pe"],
        "source": fields["source"],
        "payload": fields["payload"],
    }


def head_flit(p: dict, destination: int, source: int, payload: int) -> int:
    """The head flit of a packet from PE ``source`` to PE ``destination`` (PE numbers)."""
    node, pe = divmod(destination, p["cards"])
    head = pe << p["pe"][0] | source << p["source"][0] | payload << p["payload"][0]
    for (offset, _), radix in reversed(list(zip(p["digits"], p["radices"]))):
        node, digit = divmod(node, radix)  # o0 is the most significant digit
        head |= digit << offset
    return head


def cpp_header(p: dict) -> str:
    def array(values) -> str:
        return "{" + ", ".join(str(v) for v in values) + "}"

    return f"""\
// The constants of network {p["top"]} for tb_uniform.cpp, written by net_params.py from the
// generator's manifest.
#pragma once
constexpr const char* NET_TOP = "{p["top"]}";
constexpr int NET_PES = {p["pes"]};
constexpr int NET_CARDS = {p["cards"]};  // PEs per node
constexpr int NET_FLIT_WIDTH = {p["flit_width"]};
constexpr int NET_PACKET_LENGTH = {p["max_packet_length"]};
constexpr int NET_DIMS = {len(p["radices"])};
constexpr int NET_RADIX[NET_DIMS] = {array(p["radices"])};  // o0 (X) first
constexpr int NET_DIGIT_OFFSET[NET_DIMS] = {array(o for o, _ in p["digits"])};
constexpr int NET_PE_OFFSET = {p["pe"][0]};
constexpr int NET_SOURCE_OFFSET = {p["source"][0]}, NET_SOURCE_WIDTH = {p["source"][1]};
constexpr int NET_PAYLOAD_OFFSET = {p["payload"][0]}, NET_PAYLOAD_WIDTH = {p["payload"][1]};
"""


def iverilog_flags(p: dict) -> str:
    """``-D``/``-P`` flags for tb_one_packet.v: a packet from PE 0 to the last PE and back."""
    last = p["pes"] - 1
    values = {"P": p["pes"], "W": p["flit_width"], "L": p["max_packet_length"],
              "DEST": last, "HEAD_FWD": head_flit(p, last, 0, 0x5A),
              "HEAD_BACK": head_flit(p, 0, last, 0xA5)}
    return " ".join([f"-DTWINNET_TOP={p['top']}",
                     *(f"-Ptb_one_packet.{name}={value}" for name, value in values.items())])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("--iverilog", action="store_true",
                        help="print iverilog flags for tb_one_packet.v instead of the header")
    args = parser.parse_args(argv)
    params = load(args.manifest)
    sys.stdout.write(iverilog_flags(params) + "\n" if args.iverilog else cpp_header(params))
    return 0


if __name__ == "__main__":
    sys.exit(main())
