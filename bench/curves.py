"""Latency-throughput plots shared by the bench scripts.

:func:`plot_rows` draws one row per experiment: accepted throughput and mean network latency
against offered load, one curve per network, from the points of
:func:`twinnet.sim_tb.network_sim.simulate`'s ``hardware_traffic`` test.
"""

from pathlib import Path


def plot_rows(path: Path, rows, *, unit: str = "flits/PE/cycle", scale: float = 1.0,
              legend_columns: int = 1) -> None:
    """Write ``path``: for each ``(title, curves)`` of ``rows`` a row of two plots, where
    ``curves`` is a list of ``(label, points, style)`` (``style``: matplotlib keywords).
    Loads are the points' flits per PE per cycle times ``scale`` (e.g. PEs per node, to plot
    per node), in ``unit``."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(len(rows), 2, figsize=(11, 3.8 * len(rows)), squeeze=False)
    for row, (title, curves) in enumerate(rows):
        for label, points, style in curves:
            offered = [scale * p["offered_flits_per_pe_cycle"] for p in points]
            axes[row][0].plot(offered, [scale * p["accepted_flits_per_pe_cycle"]
                                        for p in points], marker="o", label=label, **style)
            axes[row][1].plot(offered, [p["mean_latency"] for p in points], marker="o",
                              label=label, **style)
        axes[row][0].set_title(f"{title}: accepted throughput")
        axes[row][0].set_xlabel(f"offered {unit}")
        axes[row][0].set_ylabel(f"accepted {unit}")
        axes[row][1].set_title(f"{title}: mean network latency")
        axes[row][1].set_xlabel(f"offered {unit}")
        axes[row][1].set_ylabel("cycles")
        axes[row][0].legend(ncol=legend_columns, fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    pyplot.close(figure)
