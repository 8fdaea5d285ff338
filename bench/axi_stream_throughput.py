"""Throughput of the AXI4-Stream interfaces against the raw PE ports, at 64-byte and 1-KiB frames.

The network: a 3x3 torus (bubble) with 288-bit flits, 32-byte beats and packets of up to 64
flits, so a frame of up to 63 beats (2,016 bytes) is one packet. Through the interfaces every
PE sends ``--frames`` frames of one size to PEs drawn uniformly (itself included) as fast as
its interface takes them (cocotbext-axi sources and sinks, no pauses, on Verilator): frames and
bytes per cycle per PE, from the cycles until the last frame arrived. The raw ports carry the
same packets (a head and a flit per beat: 3 flits for 64 bytes, 33 for 1 KiB) under the
traffic in hardware (``twinnet sim``, uniform, offered one flit per PE per cycle): the
accepted flits per PE per cycle, and the payload bytes they carry (32 per body flit). Several
seeds; writes ``bench/results/axi_stream_throughput.json`` with the commit.

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

WORDS = ["torus", "--radix", "3,3", "--flit-width", "288", "--max-packet-length", "64"]
BEAT_BYTES = 32
SIZES = (64, 1024)


def interfaces(size: int, frames: int, seed: int) -> dict:
    network = network_from_words(WORDS + ["--ni", "axi-stream", "--ni-bytes", str(BEAT_BYTES)])
    result = simulate_frames(network, "verilator", ROOT / "build" / "bench-axis", frames=frames,
                             sizes=[size, size], bad_dest=0, oversize=0, pause=0.0, seed=seed)
    pes, cycles = result["config"]["pes"], result["cycles"]
    return {"frames": result["delivered"], "cycles": cycles,
            "frames_per_pe_cycle": result["delivered"] / pes / cycles,
            "bytes_per_pe_cycle": result["delivered"] * size / pes / cycles}


def raw(size: int, packets: int, seed: int) -> dict:
    beats = -(-size // BEAT_BYTES)
    length = beats + 1
    done = subprocess.run(
        [sys.executable, "-m", "twinnet.cli.main", "sim", *WORDS, "--packet-lengths",
         str(length), "--rate", repr(1 / length), "--packets", str(packets), "--seed", str(seed),
         "--out", str(ROOT / "build" / "bench-axis-raw"), "--json"],
        capture_output=True, text=True, check=True)
    measured = json.loads(done.stdout)["results"]
    flits = measured["accepted_flits_per_pe_cycle"]
    return {"accepted_flits_per_pe_cycle": flits,
            "bytes_per_pe_cycle": flits * beats / length * BEAT_BYTES}


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
    for size in SIZES:
        runs = {"interfaces": [interfaces(size, args.frames, seed) for seed in seeds],
                "raw": [raw(size, args.frames * 9, seed) for seed in seeds]}
        mean = {side: sum(run["bytes_per_pe_cycle"] for run in entries) / len(entries)
                for side, entries in runs.items()}
        runs["ratio"] = mean["interfaces"] / mean["raw"]
        results["sizes"][str(size)] = runs
        print(f"{size} bytes: interfaces {mean['interfaces']:.2f} bytes/PE/cycle, raw ports "
              f"{mean['raw']:.2f} (x{runs['ratio']:.2f})", flush=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
