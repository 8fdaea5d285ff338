"""The table of the papers' throughput claims against the RTL, from the benches' JSON.

Reads ``bench/results/families.json`` (bench/families.py: every family's paper preset),
``twisted.json`` (bench/twisted.py: 004's pairs) and ``paper_003_7_3.json``
(bench/paper_003_7_3.py: 003 §7.3's configurations; ``paper_003_7_3-knee.json``, where a
configuration's knee was refined between its loads), and writes one Markdown table — claim,
paper figure and conditions, RTL figure and conditions, ratio, bound of the routing built,
target, met — between the ``<!-- results-table -->`` markers of ``docs/results.md``.
Usage::

    .venv/bin/python bench/results_table.py [--check]

``--check`` fails when the document's table differs from the one the JSON gives.
"""

import argparse
import json
import sys
from pathlib import Path

from twinnet.model.deadlock import escape_vc_count

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DOC = ROOT / "docs" / "results.md"
BEGIN, END = "<!-- results-table -->", "<!-- /results-table -->"

#: 002 Table 3 (16x16, uniform, flits per node and cycle) and the share the issue asks for.
PAPER_002 = {"002-t16": ("T16", 0.45), "002-dt16": ("DT16", 0.96), "002-kt16": ("KT16", 1.49)}
CONDITIONS_002 = ("002's simulator (FSIN): adaptive routing over the bubble escape, \"enough\" "
                  "VCs and injectors, every input queue may eject at once, 5 seeds × 50,000 "
                  "cycles")
#: 004: the 2a×a twisted torus over the untwisted one, and the targets per shape.
TARGETS_004 = {"8x4": 1.35, "16x8": 1.35, "48x12": 1.7}
#: 003 §7.3.3: D's throughput over the other configurations with bubble flow control.
PAPER_003 = (10, 23)
#: The share of the routing's bound every family's paper preset should reach.
FAMILY_SHARE = 0.85


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("s" if count != 1 else "")


def load(name: str) -> dict | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def ours(case: dict) -> str:
    parameters = case["parameters"]
    seeds = len(case["seeds"])
    allocator = "iSLIP" if parameters.get("allocator") == "islip" else "round robin"
    depth = parameters.get("buffer_depth") or "default"
    buffers = (f"{plural(parameters['vcs'], 'VC')} × {depth} flits" if parameters.get("vcs")
               else f"{depth} flits per VC")
    # The JSON of earlier runs names the longest packet packet_length.
    length = parameters.get("max_packet_length") or parameters.get("packet_length")
    return (f"split router, {allocator}, {length}-flit packets, "
            f"{buffers}, {seeds} seed" + ("s" if seeds > 1 else ""))


def sweep_case(preset: str) -> dict | None:
    """A 002 preset's figures from its ``twinnet sweep --preset`` JSON (with its knee
    refinement, if any) when bench/families.py has not run it: the best load's mean over
    the seeds, and the routing's bound."""
    from peaks import peak

    from families import bound_of, network_of

    sweeps = [data for data in (load(f"{preset}-sweep.json"), load(f"{preset}-knee-sweep.json"))
              if data]
    if not sweeps:
        return None
    points = [point for data in sweeps for point in data["points"]]
    return {"parameters": sweeps[0]["parameters"], "seeds": sorted({p["seed"] for p in points}),
            **peak(points), "bound": bound_of(network_of(preset))}


def rows_002(families: dict) -> list[list[str]]:
    """002 Table 3's rows; the king cases found are added to ``families`` (for their row
    against the bound)."""
    rows = []
    for preset, (name, paper) in PAPER_002.items():
        case = families.get(preset) or sweep_case(preset)
        if case is not None and preset not in families:
            reachable = min(1.0, case["bound"])
            families[preset] = {**case, "family": "king", "reachable_bound": reachable,
                                "share_of_bound": case["peak_accepted"] / reachable}
        if case is None:
            rows.append([f"002 Table 3, {name}", f"{paper}", "not measured", "", "", "", ""])
            continue
        pes = case["parameters"].get("pe_ports", 1)
        rtl, bound = case["peak_accepted"] * pes, case["bound"] * pes
        target = 0.9 * paper
        rows.append([f"002 Table 3, {name} (`--preset {preset}`)",
                     f"{paper:.2f} flits/node/cycle", f"{rtl:.3f} ({ours(case)}, {pes} PEs)",
                     f"{rtl / paper:.2f}", f"{bound:.3f} (mean load, minimal paths)",
                     f"≥ {target:.3f}", "yes" if rtl >= target else
                     f"no, {100 * (1 - rtl / target):.0f} % short"])
    return rows


def rows_004(twisted: dict | None) -> list[list[str]]:
    if twisted is None:
        return [["004, twisted over untwisted", "≈ ×1.5", "not measured", "", "", "", ""]]
    rows = []
    for shape, target in TARGETS_004.items():
        pair = twisted["pairs"].get(shape)
        if pair is None:
            continue
        gain = pair["saturation_gain"]
        peaks = pair["peak_accepted"]
        vcs = twisted.get("vcs") or escape_vc_count(twisted["escape"])
        pes = pair.get("pe_ports", 1)
        rows.append([f"004, {shape} twisted (t_YX = {int(shape.split('x')[0]) // 2}) over "
                     f"untwisted (`--preset 004-{shape}`)",
                     ("≈ ×1.5 (2a×a)" if shape in ("8x4", "16x8") else "—"),
                     f"×{gain:.2f} ({peaks[1]:.3f} / {peaks[0]:.3f} flits/PE/cycle, "
                     f"{plural(vcs, 'VC')} per link, {plural(pes, 'PE')} per router, "
                     f"{len(twisted.get('seeds', [1]))} seeds)",
                     f"{gain / pair['model_bound_ratio']:.2f} of the bound ratio",
                     f"×{pair['model_bound_ratio']:.2f}; ×"
                     f"{pair.get('reachable_bound_ratio', pair['model_bound_ratio']):.2f} with "
                     "the PE port's cap of 1",
                     f"≥ ×{target}", "yes" if gain >= target else
                     f"no, ×{target - gain:.2f} short"])
    return rows


def rows_003(paper_003: dict | None, knee: dict | None) -> list[list[str]]:
    """The 003 rows; ``knee`` (``paper_003_7_3-knee.json``) holds configurations whose knee
    was refined between the bench's loads: the better share counts."""
    if paper_003 is None:
        return [["003 §7.3, D over B–J", "+10–23 %", "not measured", "", "", "", ""]]
    summary = paper_003["summary"]["bubble"]
    low, high = summary["d_gain_over_b_to_j_percent"]
    shares = dict(summary["share_of_bound"])
    refined = (knee or {}).get("bubble", {})
    for name, case in refined.items():
        shares[name] = max(shares[name], case["share_of_bound"])
    worst = min(shares, key=shares.get)
    note = (f"; {', '.join(sorted(refined))} at a refined knee "
            f"(`paper_003_7_3-knee.json`)" if refined else "")
    seeds = len(paper_003.get("seeds", [1]))
    return [["003 §7.3, 3DT 4×4×4 bubble: D's gain over B–J (`--preset 003-bubble`)",
             f"+{PAPER_003[0]}–{PAPER_003[1]} % (30 runs per point)",
             f"{low:+.1f} to {high:+.1f} % ({seeds} seeds)", "", "", "reported", "—"],
            ["003 §7.3, every configuration A–J at its channel-load bound", "",
             f"{100 * min(shares.values()):.0f}–{100 * max(shares.values()):.0f} % "
             f"(lowest: {worst} at {100 * shares[worst]:.1f} %{note})", "",
             "per configuration (bench JSON)", "≥ 90 %",
             "yes" if min(shares.values()) >= 0.9 else
             f"no, {worst} at {100 * shares[worst]:.1f} %"]]


def rows_families(families: dict) -> list[list[str]]:
    rows = []
    for preset, case in families.items():
        share = case["share_of_bound"]
        rows.append([f"{case['family']} at its routing's bound (`--preset {preset}`)", "",
                     f"{case['peak_accepted']:.3f} flits/PE/cycle ({ours(case)})", "",
                     f"{case['reachable_bound']:.3f}", f"≥ {100 * FAMILY_SHARE:.0f} %",
                     ("yes" if share >= FAMILY_SHARE else "no")
                     + f", {100 * share:.1f} %"])
    return rows


def table() -> str:
    families = (load("families.json") or {}).get("cases", {})
    families = dict(families)
    rows = [*rows_002(families), *rows_004(load("twisted.json")),
            *rows_003(load("paper_003_7_3.json"), load("paper_003_7_3-knee.json")),
            *rows_families(families)]
    header = ["claim", "paper", "RTL (Verilator, every packet checked)", "RTL / paper",
              "bound of the routing built", "target", "met"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + f"\n\nPaper conditions for 002: {CONDITIONS_002}."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = DOC.read_text()
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    new = text[:start] + "\n" + table() + "\n" + text[stop:]
    if args.check:
        sys.exit(0 if new == text else "docs/results.md: the table differs from the JSON")
    DOC.write_text(new)


if __name__ == "__main__":
    main()
