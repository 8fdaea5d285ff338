"""Latency-throughput through the AXI4-Stream interfaces against the raw PE ports, carrying the
same packets.

The network: a 3x3 torus (bubble, 32-bit flits, 3-byte beats, packets of up to 4 flits) with
frames cut into up to 4 packets (``--ni-frame-packets 4``: frames of 1 to 36 bytes, uniform),
and with frames of one packet (1 to 9 bytes).
``twinnet sweep --ni axi-stream`` offers frames at each load (flits per PE per cycle, a
frame's heads counted) through the interfaces (cocotbext-axi, every frame checked); the raw
sweep (``twinnet sweep``, traffic in hardware) offers packets of the lengths those frames are
cut into, in the same proportions (worked out here from the frame sizes), at the same loads.
The peak accepted throughput of the two (the largest mean over the seeds of a load) is
compared. Writes
``bench/results/axi_stream_sweep.json`` with the commit.

    python bench/axi_stream_sweep.py [--seeds 1,2,3] [--loads 0.1,0.2,...]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from provenance import provenance

from twinnet.sim_tb.axi_stream_sim import frame_flits

WORDS = ["torus", "--radix", "3,3"]
PACKET_BEATS, BEAT_BYTES = 3, 3
#: The most packets of a frame, per case.
FRAME_PACKETS = (4, 1)
LOADS = "0.1,0.2,0.3,0.4,0.5,0.6,0.7"


def packet_mix(frame_packets: int) -> Counter:
    """Packets (by their flits) that frames of 1 to the longest, uniform, are cut into."""
    mix = Counter()
    for size in range(1, frame_packets * PACKET_BEATS * BEAT_BYTES + 1):
        beats = -(-size // BEAT_BYTES)
        while beats:
            mix[min(beats, PACKET_BEATS) + 1] += 1
            beats -= min(beats, PACKET_BEATS)
    return mix


def sweep(words: list[str], loads: str, seeds: str, out: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "twinnet.cli.main", "sweep", *words,
                           "--loads", loads, "--seeds", seeds, "--warmup", "500", "--measure",
                           "3000", "--out", str(out), "--json"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"twinnet sweep {' '.join(words)} failed: {done.stderr.strip()}")
    data = json.loads(done.stdout)
    return {"network": data["network"], "loads": data["loads"],
            "peak_accepted": max(row["accepted_mean"] for row in data["loads"]),
            "model_throughput_bound": data["model_throughput_bound"]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--loads", default=LOADS)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results"
                        / "axi_stream_sweep.json")
    args = parser.parse_args(argv)
    results = {"provenance": provenance(), "seeds": args.seeds, "loads": args.loads,
               "cases": {}}
    with tempfile.TemporaryDirectory(prefix="axi_stream_sweep_") as folder:
        for packets in FRAME_PACKETS:
            mix = packet_mix(packets)
            lengths = sorted(mix)
            sizes = range(1, packets * PACKET_BEATS * BEAT_BYTES + 1)
            case = results["cases"][f"frame_packets_{packets}"] = {
                "frame_sizes": [1, sizes[-1]],
                "mean_frame_flits": sum(frame_flits(size, BEAT_BYTES, PACKET_BEATS)
                                        for size in sizes) / len(sizes),
                "packet_mix": {str(n): mix[n] for n in lengths}}
            interfaces = WORDS + ["--ni", "axi-stream", "--ni-frame-packets", str(packets)]
            raw = WORDS + ["--packet-lengths", ",".join(map(str, lengths)),
                           "--packet-length-weights", ",".join(str(mix[n]) for n in lengths)]
            for name, words in (("interfaces", interfaces), ("raw", raw)):
                print(f"{name}: twinnet sweep {' '.join(words)}", flush=True)
                case[name] = sweep(words, args.loads, args.seeds,
                                   Path(folder) / f"{name}-{packets}")
                case[name]["words"] = words
                print(f"  peak accepted {case[name]['peak_accepted']:.3f} flits/PE/cycle",
                      flush=True)
            case["peak_ratio"] = (case["interfaces"]["peak_accepted"]
                                  / case["raw"]["peak_accepted"])
            print(f"frames of up to {packets} packets: interfaces / raw peak accepted: "
                  f"x{case['peak_ratio']:.3f}", flush=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
