"""Bitstreams of every board's self-test: utilisation, Fmax and build time.

For each board of :data:`twinnet.boards.targets.BOARDS` (or ``--boards``), builds the
self-test of its default network (or of ``--network``, a ``twinnet gen`` family and flags,
e.g. ``"torus --radix 4,4"``) with :func:`twinnet.boards.targets.board_build`: the network's
Verilog with traffic generators and checkers on every PE, synthesis, place-and-route and the
bitstream, with the pip-installed YoWASP tools. A board whose network does not fit records
nextpnr's utilisation line instead. Writes ``bench/results/boards.json``. Usage::

    .venv/bin/python bench/boards.py [--boards ulx3s-85f,ecpix5-45f] [--network "torus --radix 4,4"]
"""

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from twinnet.boards.targets import BOARDS, board_build
from twinnet.cli.gen_cmd import network_from_words
from twinnet.gen import fpga

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "boards"


def network_of(words: str):
    """The network a ``twinnet gen`` command line describes."""
    return network_from_words(shlex.split(words))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", default=",".join(BOARDS))
    parser.add_argument("--network", help="family and flags as for 'twinnet gen' (default: "
                                          "each board's own network)")
    parser.add_argument("--out", type=Path, default=RESULTS / "boards.json")
    args = parser.parse_args()
    network = network_of(args.network) if args.network else None
    results = {}
    for board in args.boards.split(","):
        started = time.perf_counter()
        try:
            built = board_build(board, BUILD / board, network,
                                progress=lambda line: print(line, file=sys.stderr, flush=True))
        except fpga.FpgaError as error:
            built = {"board": board, "error": str(error)}
        built["build_s"] = round(time.perf_counter() - started, 1)
        built.pop("files", None)
        if "folder" in built:  # relative to the repository: no machine's path in the results
            built["folder"] = str(Path(built["folder"]).relative_to(BUILD.parents[2]))
        results[board] = built
        print(json.dumps(built), file=sys.stderr, flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
