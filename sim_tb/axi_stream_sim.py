"""Run the cocotbext-axi test of a network's AXI4-Stream interfaces
(:mod:`twinnet.sim_tb.axi_stream_cocotb`): generate the network with its interfaces, build the
AXI4-Stream top on a simulator and send frames through it."""

import json
from pathlib import Path


def simulate_frames(network, simulator: str, build_dir, *, family=None,
                    waves: bool | None = None, **settings) -> dict:
    """Generate ``network`` (built with ``ni`` axi-stream) into ``build_dir/rtl``, build its
    AXI4-Stream top on ``simulator`` in ``build_dir`` and run the cocotb test ``frames`` with
    ``settings`` over the defaults (12 frames per PE, or one to every PE if there are more, of 1
byte to the longest, 2 to a PE that
    does not exist where there is such a number, 2 oversize, pauses in 30 % of the cycles,
    seed 1); ``waves`` dumps waveforms (:func:`twinnet.sim_tb.runner.run`). Returns the
    settings used (``config``), frames ``delivered``, the network's
    ``cycles`` and each interface's ``counters``. Raises ``AssertionError`` when a check
    fails."""
    from twinnet.families import family_for
    from twinnet.gen.generate import generate_network

    from . import network_sim, runner

    family = family or family_for(network)
    build_dir = Path(build_dir)
    files = generate_network(network, build_dir / "rtl", family=family)
    manifest = json.loads(files[-1].read_text())
    section = manifest["axi_stream"]
    pes = len(manifest["terminals"])
    dest_width = next(port["width"] for port in section["pes"][0]["slave"]
                      if port["name"].endswith("_tdest"))
    config = {"pes": pes, "data_bytes": section["data_bytes"], "id_width": section["id_width"],
              "user_width": section["user_width"],
              "max_frame_bytes": section["max_frame_bytes"], "dest_width": dest_width,
              "sizes": [1, section["max_frame_bytes"]], "frames": max(12, pes),
              "bad_dest": 2 if pes < 1 << dest_width else 0, "oversize": 2, "pause": 0.3,
              "seed": 1, "ordered": family.in_order(network),
              "separate_clocks": network.ni_clock == "separate", **settings}
    runner.run(simulator=simulator, toplevel=section["top"],
               test_module="twinnet.sim_tb.axi_stream_cocotb", build_dir=build_dir,
               config=config, sources=[path for path in files if path.suffix == ".v"],
               hier_blocks=network_sim.hierarchy_blocks(manifest), log=True, waves=waves,
               run_dir=build_dir)
    results = json.loads((build_dir / "results.json").read_text())["frames"]
    return {"config": config, **results}
