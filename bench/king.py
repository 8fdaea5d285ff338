"""002 §4.2 in RTL: saturation throughput of the 16×16 torus, diagonal torus and king torus.

002 Table 3 measures, under uniform traffic on 16×16 tori, 0.45 (T), 0.96 (DT) and 1.49 (KT)
phits per cycle per node, against bounds of 0.5, 1.0 and 1.5, with 002 Table 2's settings:
8-phit packets, virtual cut-through with the bubble, 2 VCs, 32 phits of buffer, enough
injectors per router to saturate the bisection, adaptive routing (2S hop-by-hop on KT).

Here each network is generated with the king family's routing (DOR on T, 002 Alg. 1 on DT,
Knaive on KT: deterministic, one route per pair), the bubble escape on one VC with the same
32 phits per input port, 8-flit packets and ``--pe-ports`` PEs per router (two by default:
each PE port takes at most one flit per cycle, and KT's bound is 1.5), and swept over offered
loads on Verilator (the C++ program of :mod:`twinnet.program.driver`), every packet
checked end to end. Beside each measured saturation it writes the model's bound for the
routing actually built: one over the largest channel load of its paths under uniform traffic
(:func:`twinnet.model.traffic.channel_loads`), per node. Deterministic routing loads the
channels less evenly than adaptive routing, so the bound itself can sit below 002's.

With ``--routing adaptive`` the networks take 002's adaptive routing instead: 2S hop-by-hop on
KT, hop-by-hop on T and DT, over the bubble escape, with 002's two VCs per link (VC 0 the
escape, VC 1 adaptive) sharing the 32 phits of each input port (16 per VC). The model's bound
is then the topology's (002's: the routes spread over every minimal path), not computed here.

``--pattern tornado`` offers the terminal-ring tornado of :mod:`twinnet.model.traffic` instead
(terminal t sends to t + 127 on 256 terminals: router (x, y) to (x - 1, y + 8), or (15, y + 7)
from x = 0, half way round in y): the adverse pattern under which 002 §4.2 finds 2S hop-by-hop
ahead of Knaive, which cannot spread over the diagonals. Compare the KT runs of both routings.

Writes ``bench/results/king.json`` (``king-adaptive.json`` with ``--routing adaptive``, and
``-tornado`` before ``.json`` under tornado; every point; per network the peak accepted
throughput per node, the model's bound and 002's figure) and a plot beside it. Usage::

    .venv/bin/python bench/king.py [--kinds T,DT,KT] [--side 16] [--pe-ports 2]
        [--routing deterministic|adaptive] [--pattern uniform|tornado] [--loads 0.3,0.4]
"""

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from curves import plot_rows
from provenance import provenance

from twinnet import families
from twinnet.model.king_network import KingNetworkConfig
from twinnet.model.sizes import DEFAULT_PIPELINE, PIPELINES
from twinnet.model.traffic import channel_loads
from twinnet.sim_tb import network_sim

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "king"
#: 002 Table 3 (16×16, uniform): measured saturation and bound, phits per cycle per node.
PAPER = {"T": {"measured": 0.45, "bound": 0.5}, "DT": {"measured": 0.96, "bound": 1.0},
         "KT": {"measured": 1.49, "bound": 1.5}}
#: Offered loads per kind, in flits per node per cycle, up to past 002's bound.
LOADS = {"T": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8),
         "DT": (0.2, 0.4, 0.6, 0.8, 0.9, 1.0, 1.2),
         "KT": (0.3, 0.6, 0.9, 1.1, 1.3, 1.5, 1.8)}
#: Offered loads under tornado, flits per node per cycle.
TORNADO_LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8)
#: 002 Table 2: 8-phit packets, 32 phits of buffer per port.
PACKET_LENGTH, BUFFER_DEPTH = 8, 32


#: 002's adaptive routing per kind, and the king family's deterministic one.
ADAPTIVE = {"T": "hop-by-hop", "DT": "hop-by-hop", "KT": "2s"}
DETERMINISTIC = {"T": "dor", "DT": "diagonal", "KT": "knaive"}


def network_of(kind: str, side: int, pe_ports: int, adaptive: bool = False, vcs: int = 2,
               depth: int | None = None, pipeline: int = DEFAULT_PIPELINE):
    """The bench's network; under adaptive routing ``vcs`` VCs of ``depth`` flits each
    (default: 002's two VCs sharing the port's 32 flits)."""
    values = {"kind": kind, "side": side, "escape": "bubble", "pe_ports": pe_ports,
              "max_packet_length": PACKET_LENGTH, "buffer_depth": BUFFER_DEPTH,
              "pipeline": pipeline}
    if adaptive:
        values.update(routing=ADAPTIVE[kind], vcs=vcs, buffer_depth=depth or BUFFER_DEPTH // 2)
    return KingNetworkConfig.from_dict(values)


def bound_per_node(kind: str, side: int, pattern: str = "uniform") -> float:
    """One over the largest channel load of the built routing's paths under ``pattern`` (one
    PE per node offering one flit per cycle): the saturation bound per node."""
    network, family = network_of(kind, side, 1), families.family("king")

    def paths(source, destination):
        return [(router, port) for router, port, _ in family.hops(network, source,
                                                                   destination)]

    loads = channel_loads(paths, network.terminal_count, pattern)
    return 1 / max(loads.values())


def run(kind: str, side: int, pe_ports: int, loads, warmup: int, measure: int,
        adaptive: bool, pattern: str = "uniform", vcs: int = 2, depth: int | None = None,
        pipeline: int = DEFAULT_PIPELINE) -> dict:
    network = network_of(kind, side, pe_ports, adaptive, vcs, depth, pipeline)
    points = [{"pattern": pattern, "rate": load / pe_ports / PACKET_LENGTH, "seed": 1,
               "warmup": warmup, "measure": measure, "drain_limit": 20_000}
              for load in loads]
    results = network_sim.simulate(network, "verilator", BUILD / network.name,
                                   {network_sim.TRAFFIC_TEST: {"points": points}}, log=True)
    points = results[network_sim.TRAFFIC_TEST]["points"]
    peak = max(p["accepted_flits_per_pe_cycle"] for p in points) * pe_ports
    return {"kind": kind, "network": network.name, "pe_ports": pe_ports, "points": points,
            "peak_accepted_per_node": peak,
            "cycles_per_second": [p["cycles_per_second"] for p in points]}


def plot_routings(pattern: str) -> Path | None:
    """When both routings' results under ``pattern`` are in ``bench/results`` (with the same
    PEs per router), plot them together into ``king[-<pattern>]-routings.png``: under
    tornado, 002 §4.2's comparison of 2S hop-by-hop with Knaive."""
    suffix = "" if pattern == "uniform" else f"-{pattern}"
    paths = [RESULTS / f"{name}{suffix}.json" for name in ("king", "king-adaptive")]
    if not all(path.exists() for path in paths):
        return None
    results = [json.loads(path.read_text()) for path in paths]
    if len({result["pe_ports"] for result in results}) > 1:
        return None
    curves = [(f"{kind}{result['side']} "
               f"{(ADAPTIVE if adaptive else DETERMINISTIC)[kind]}",
               run["points"], {"linestyle": "-" if adaptive else "--"})
              for result, adaptive in zip(results, (False, True))
              for kind, run in result["runs"].items()]
    out = RESULTS / f"king{suffix}-routings.png"
    plot_rows(out, [(f"{pattern}, {results[0]['pe_ports']} PEs per node", curves)],
              unit="flits/node/cycle", scale=results[0]["pe_ports"])
    return out


def offered_loads(text: str) -> tuple[float, ...]:
    """``--loads``: comma-separated offered loads, each a positive number."""
    loads = []
    for item in text.split(","):
        try:
            load = float(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{item!r} is not a number") from None
        if not 0 < load < float("inf"):
            raise argparse.ArgumentTypeError(f"{item!r}: each load must be a finite number above 0")
        loads.append(load)
    return tuple(loads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default="T,DT,KT")
    parser.add_argument("--side", type=int, default=16)
    parser.add_argument("--pe-ports", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=2000)
    parser.add_argument("--measure", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--routing", choices=("deterministic", "adaptive"),
                        default="deterministic")
    parser.add_argument("--pattern", choices=("uniform", "tornado"), default="uniform")
    parser.add_argument("--vcs", type=int, default=2,
                        help="adaptive: VCs per link (002: 2), for diagnosis")
    parser.add_argument("--buffer-depth", type=int,
                        help="adaptive: flits per VC (002: 16, the port's 32 shared)")
    parser.add_argument("--loads", type=offered_loads,
                        help="offered loads, flits/node/cycle, comma-separated, each above 0 "
                        "and at most --pe-ports (default: a grid per kind up to past 002's "
                        "bound)")
    parser.add_argument("--pipeline", type=int, choices=PIPELINES, default=DEFAULT_PIPELINE,
                        help="the router microarchitecture by its cycles per hop: 2 compact, "
                        "3 split (docs/router.md)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.loads and max(args.loads) > args.pe_ports:
        parser.error(f"--loads {max(args.loads)}: a node injects at most --pe-ports "
                     f"({args.pe_ports}) flits per cycle")
    adaptive = args.routing == "adaptive"
    name = "king-adaptive" if adaptive else "king"
    suffix = "" if args.pattern == "uniform" else f"-{args.pattern}"
    if adaptive and (args.vcs != 2 or args.buffer_depth):
        suffix += f"-v{args.vcs}-d{args.buffer_depth or BUFFER_DEPTH // 2}"
    if args.pipeline != DEFAULT_PIPELINE:
        suffix += f"-p{args.pipeline}"
    out = args.out or RESULTS / f"{name}{suffix}.json"
    kinds = args.kinds.split(",")
    runs = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        loads = {kind: args.loads or (LOADS[kind] if args.pattern == "uniform"
                                      else TORNADO_LOADS) for kind in kinds}
        futures = {kind: pool.submit(run, kind, args.side, args.pe_ports, loads[kind],
                                     args.warmup, args.measure, adaptive, args.pattern,
                                     args.vcs, args.buffer_depth, args.pipeline)
                   for kind in kinds}
        for kind, future in futures.items():
            runs[kind] = result = future.result()
            if adaptive:  # the topology's bound (002's), uniform traffic only
                bound = PAPER[kind]["bound"] if args.pattern == "uniform" else None
            else:
                bound = bound_per_node(kind, args.side, args.pattern)
            result["model_bound_per_node"] = bound
            result["paper"] = PAPER[kind]
            result["peak_over_paper_percent"] = 100 * (
                result["peak_accepted_per_node"] / PAPER[kind]["measured"] - 1)
            print(f"{kind}{args.side}: peak accepted {result['peak_accepted_per_node']:.3f} "
                  f"flits/node/cycle (model bound {bound}; 002 Table 3, uniform: "
                  f"{PAPER[kind]['measured']})", file=sys.stderr, flush=True)
    result = {"simulator": "verilator", "routing": args.routing, "pattern": args.pattern,
              "side": args.side, "vcs": args.vcs if adaptive else 1,
              "pe_ports": args.pe_ports,
              "max_packet_length": PACKET_LENGTH,
              "flits_per_vc": (args.buffer_depth or BUFFER_DEPTH // 2) if adaptive
              else BUFFER_DEPTH,
              "pipeline": args.pipeline,
              "warmup": args.warmup, "measure": args.measure, "runs": runs,
              "provenance": provenance()}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    plot_rows(out.with_suffix(".png"), [(
        f"{args.side}x{args.side} tori, {args.pattern}, {args.pe_ports} PEs per node",
        [(runs[kind]["network"], runs[kind]["points"], {}) for kind in kinds])],
        unit="flits/node/cycle", scale=args.pe_ports)
    both = plot_routings(args.pattern) if not args.out else None
    if both:
        print(f"both routings plotted in {both}", file=sys.stderr)
    print(json.dumps({kind: {key: runs[kind][key] for key in
                             ("peak_accepted_per_node", "model_bound_per_node",
                              "peak_over_paper_percent")} for kind in kinds}, indent=1))


if __name__ == "__main__":
    main()
