"""``twinnet sweep`` run from the benches: the command, and the flags the sweep benches share."""

import json
import subprocess
import sys
from pathlib import Path

from bounds import channel_load_bound

from twinnet.cli.gen_cmd import network_from_words


def run(words: list[str], loads, seeds, jobs: int, warmup: int, measure: int,
        build: Path) -> dict:
    """``twinnet sweep --stalls --json`` of the network ``words`` name (family, preset and
    flags) at offered ``loads`` over ``seeds``; raises ``RuntimeError`` with the sweep's last
    line when it fails."""
    command = [str(Path(sys.executable).parent / "twinnet"), "sweep", *words, "--stalls",
               "--loads", ",".join(f"{load:.4f}" for load in loads),
               "--seeds", ",".join(map(str, seeds)), "--jobs", str(jobs),
               "--warmup", str(warmup), "--measure", str(measure),
               "--out", str(build), "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(words)}: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout)


def add_arguments(parser, cases: str, out: Path) -> None:
    """The flags of a sweep bench: ``--cases`` (default ``cases``, comma-separated),
    ``--seeds``, ``--jobs``, ``--warmup``, ``--measure`` and ``--out`` (default ``out``)."""
    parser.add_argument("--cases", default=cases)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--measure", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=out)


def bound_loads(words: list[str], fractions) -> tuple[float, list[float]]:
    """The channel-load bound of the network ``words`` name (:mod:`bounds`) and the offered
    loads at ``fractions`` of it (of one flit per PE and cycle where the bound is above)."""
    bound = channel_load_bound(network_from_words(words))
    return bound, [min(1.0, fraction * min(1.0, bound)) for fraction in fractions]
