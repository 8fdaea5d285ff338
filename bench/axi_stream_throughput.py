"""Throughput of the AXI4-Stream interfaces against the raw PE ports, at 64-byte and 1-KiB frames.

The network: a 3x3 torus (bubble) with 288-bit flits and 32-byte beats. With packets of up to
64 flits a frame of up to 63 beats (2,016 bytes) is one packet (cases ``64`` and ``1024``);
with packets of up to 3 flits and ``--ni-frame-packets 16`` a 1-KiB frame is cut into 16
packets of 64 bytes and reassembled (case ``1024-cut``). Through the interfaces every PE sends
``--frames`` frames of one size to PEs drawn uniformly (itself included) as fast as its
interface takes them (cocotbext-axi sources and sinks, no pauses, on Verilator): frames and
bytes per cycle per PE, from the cycles until the last frame arrived. The raw ports carry the
same packets (a head and a flit per beat: 3 flits per 64 bytes, 33 for 1 KiB in one packet)
under the traffic in hardware (``twinnet sim``, uniform, offered one flit per PE per cycle):
the accepted flits per PE per cycle, and the payload bytes they carry (32 per body flit).
Several seeds; writes ``bench/results/axi_stream_throughput.json`` with the commit.

    python bench/axi_stream_throughput.py [--seeds 1,2,3] [--frames 300]
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

from provenance import ROOT, provenance

from twinnet.cli.gen_cmd import network_from_words
from twinnet.sim_tb.axi_stream_sim import simulate_frames

WORDS = ["torus", "--radix", "3,3", "--flit-width", "288"]
BEAT_BYTES = 32
#: Each case: the frame's bytes, the most flits of a packet and of packets of a frame.
CASES = {"64": (64, 64, 1), "1024": (1024, 64, 1), "1024-cut": (1024, 3, 16)}


def interfaces(size: int, length: int, packets: int, frames: int, seed: int) -> dict:
    network = network_from_words(WORDS + ["--max-packet-length", str(length), "--ni",
                                          "axi-stream", "--ni-bytes", str(BEAT_BYTES),
                                          "--ni-frame-packets", str(packets)])
    result = simulate_frames(network, "verilator", ROOT / "build" / f"bench-axis-{length}",
                             frames=frames, sizes=[size, size], bad_dest=0, oversize=0,
                             pause=0.0, seed=seed)
    pes, cycles = result["config"]["pes"], result["cycles"]
    return {"frames": result["delivered"], "cycles": cycles,
            "frames_per_pe_cycle": result["delivered"] / pes / cycles,
            "bytes_per_pe_cycle": result["delivered"] * size / pes / cycles}


def raw(size: int, length: int, packets: int, seed: int) -> dict:
    """The raw ports of the same network (packets of up to ``length`` flits) carrying
    ``packets`` packets as the interfaces cut frames of ``size`` bytes."""
    beats = min(-(-size // BEAT_BYTES), length - 1)
    flits = beats + 1
    done = subprocess.run(
        [sys.executable, "-m", "twinnet.cli.main", "sim", *WORDS, "--max-packet-length",
         str(length), "--packet-lengths", str(flits), "--rate", repr(1 / flits), "--packets",
         str(packets), "--seed", str(seed),
         "--out", str(ROOT / "build" / "bench-axis-raw"), "--json"],
        capture_output=True, text=True, check=True)
    measured = json.loads(done.stdout)["results"]
    accepted = measured["accepted_flits_per_pe_cycle"]
    return {"accepted_flits_per_pe_cycle": accepted,
            "bytes_per_pe_cycle": accepted * beats / flits * BEAT_BYTES}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--frames", type=int, default=300, help="frames per PE per run")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results"
                        / "axi_stream_throughput.json")
    args = parser.parse_args(argv)
    seeds = [int(seed) for seed in args.seeds.split(",")]
    results = {"provenance": provenance(), "network": WORDS, "beat_bytes": BEAT_BYTES,
               "seeds": seeds, "sizes": {}}
    for name, (size, length, packets) in CASES.items():
        runs = {"max_packet_length": length, "frame_packets": packets,
                "interfaces": [interfaces(size, length, packets, args.frames, seed)
                               for seed in seeds],
                "raw": [raw(size, length, args.frames * 9 * packets, seed) for seed in seeds]}
        mean = {side: sum(run["bytes_per_pe_cycle"] for run in runs[side]) / len(runs[side])
                for side in ("interfaces", "raw")}
        runs["ratio"] = mean["interfaces"] / mean["raw"]
        results["sizes"][name] = runs
        print(f"{name}: interfaces {mean['interfaces']:.2f} bytes/PE/cycle, raw ports "
              f"{mean['raw']:.2f} (x{runs['ratio']:.2f})", flush=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
