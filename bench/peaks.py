"""A sweep's peak over several seeds, for the benches."""


def by_load(points: list[dict]) -> list[list[dict]]:
    """The points that did not fail, grouped by offered rate (lowest first), one per seed."""
    points = [point for point in points if "failure" not in point]
    rates = sorted({point["rate"] for point in points})
    return [[point for point in points if point["rate"] == rate] for rate in rates]


def peak(points: list[dict]) -> dict:
    """The offered load whose mean accepted throughput over the seeds is highest:
    ``peak_accepted`` (that mean, flits per PE per cycle), ``peak_accepted_seeds``,
    ``peak_offered`` and, when the points have stall counters, ``peak_stalls`` (summed over
    the seeds)."""
    groups = by_load(points)
    accepted = [sum(p["accepted_flits_per_pe_cycle"] for p in group) / len(group)
                for group in groups]
    best = max(range(len(groups)), key=accepted.__getitem__)
    group = groups[best]
    result = {"peak_accepted": accepted[best],
              "peak_accepted_seeds": [p["accepted_flits_per_pe_cycle"] for p in group],
              "peak_offered": group[0]["offered_flits_per_pe_cycle"]}
    if all("stalls" in p for p in group):
        result["peak_stalls"] = {reason: sum(p["stalls"][reason] for p in group)
                                 for reason in group[0]["stalls"]}
    return result


def peak_summary(data: dict) -> dict:
    """The JSON of ``twinnet sweep --stalls --json`` at its peak: ``network``, ``parameters``,
    :func:`peak`'s figures, ``peak_stall_shares`` (each reason's share of the waiting
    head-cycles at the peak), ``failed_points`` and the points."""
    best = peak(data["points"])
    stalls = best.pop("peak_stalls")
    return {"network": data["network"], "parameters": data["parameters"], **best,
            "peak_stall_shares": {reason: count / max(1, stalls["heads"])
                                  for reason, count in stalls.items() if reason != "heads"},
            "failed_points": sum("failure" in p for p in data["points"]),
            "points": data["points"]}
