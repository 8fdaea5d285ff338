"""FPGA cost of one PE's AXI4-Stream interfaces (ingress and egress), beside its network's
router, with the flow of ``twinnet fpga`` (YoWASP Yosys and nextpnr, the LFSR harness).

Networks: the 3DT 4x4x4 preset with interfaces (32-bit flits, 3-byte beats, frames of up to 3
beats), a 3x3 torus with 80-bit flits, 8-byte beats and frames of up to 15 beats (16-flit
packets), and a 3x3 torus whose frames of up to 12 beats are cut into 4 packets and
reassembled (``--ni-frame-packets 4``: 288 beats of reassembly memory per interface). Each is
measured as ``--design interface`` and ``--design router`` on each device, over the nextpnr
seeds given. Writes ``bench/results/axi_stream_fpga.json`` (or ``--out``) with the commit.

    python bench/axi_stream_fpga.py [--devices ecp5-25f,ice40-hx8k] [--seeds 1,2,3]
                                    [--networks torus-3x3-frames]
"""

import argparse
import json
import tempfile
from pathlib import Path

from provenance import provenance

from twinnet.cli.gen_cmd import network_from_words
from twinnet.families import family_for
from twinnet.gen import fpga

NETWORKS = {
    "3dt-4x4x4": ["--preset", "3dt-4x4x4", "--ni", "axi-stream"],
    "torus-3x3-w80": ["torus", "--radix", "3,3", "--flit-width", "80", "--max-packet-length",
                      "16", "--ni", "axi-stream", "--ni-bytes", "8"],
    "torus-3x3-frames": ["torus", "--radix", "3,3", "--ni", "axi-stream",
                         "--ni-frame-packets", "4"],
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default="ecp5-25f,ice40-hx8k")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--networks", default=",".join(NETWORKS),
                        help=f"networks to measure, of {', '.join(NETWORKS)}")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results"
                        / "axi_stream_fpga.json")
    args = parser.parse_args(argv)
    devices = args.devices.split(",")
    seeds = [int(seed) for seed in args.seeds.split(",")]
    results = {"provenance": provenance(), "devices": devices, "seeds": seeds, "networks": {}}
    for name in args.networks.split(","):
        if name not in NETWORKS:
            parser.error(f"--networks: {name!r} is not one of {', '.join(NETWORKS)}")
        words = NETWORKS[name]
        network = network_from_words(words)
        family = family_for(network)
        entry = results["networks"][name] = {"words": words, "network": network.name,
                                             "beat_bytes": network.beat_bytes,
                                             "max_frame_beats": network.max_frame_beats}
        for design_name, design in (("interface", fpga.interface_design(network, family)),
                                    ("router", fpga.router_design(network, family))):
            runs = []
            for seed in seeds:
                with tempfile.TemporaryDirectory(prefix="axi_stream_fpga_") as folder:
                    measured = fpga.measure(
                        design, devices, Path(folder), seed=seed, keep_going=True,
                        progress=lambda line, name=name: print(f"{name} {line}"))
                runs.append(measured)
            entry[design_name] = {
                "alone": runs[0]["alone"],
                "placed": {device: {f"seed_{seed}": run["placed"][device]
                                    for seed, run in zip(seeds, runs)} for device in devices}}
            for device in devices:
                fmax = [run["placed"][device].get("fmax_mhz_min") for run in runs]
                print(f"{name} {design_name} {device}: Fmax {fmax} MHz")
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
