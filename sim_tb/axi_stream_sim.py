"""Run the cocotbext-axi tests of a network's AXI4-Stream interfaces
(:mod:`twinnet.sim_tb.axi_stream_cocotb`): generate the network with its interfaces, build the
AXI4-Stream top on a simulator and send frames through it (the test ``frames``), or run one
point of a sweep through the interfaces on a build made once (the test ``load``)."""

import json
from pathlib import Path

from twinnet.gen.manifest import Manifest

#: The cocotb module of the tests.
TEST_MODULE = "twinnet.sim_tb.axi_stream_cocotb"


def frame_flits(size: int, data_bytes: int, packet_beats: int) -> int:
    """The flits a frame of ``size`` bytes takes in the network: a flit per beat of
    ``data_bytes`` and a head per packet of up to ``packet_beats`` beats."""
    beats = -(-size // data_bytes)
    return beats + -(-beats // packet_beats)


def mean_frame_flits(config: dict) -> float:
    """The mean :func:`frame_flits` of frames of ``config["sizes"]`` bytes, uniform."""
    low, high = config["sizes"]
    return sum(frame_flits(size, config["data_bytes"], config["packet_beats"])
               for size in range(low, high + 1)) / (high - low + 1)


def prepare(network, build_dir, *, family=None) -> dict:
    """Generate ``network`` (built with ``ni`` axi-stream) into ``build_dir/rtl``; return
    the settings every test of it takes (:mod:`twinnet.sim_tb.axi_stream_cocotb`), with the
    defaults of the test ``frames`` (12 frames per PE, or one to every PE if there are more,
    of 1 byte to the longest, 2 to a PE that does not exist where there is such a number, 2
    oversize, pauses in 30 % of the cycles, seed 1)."""
    from twinnet.families import family_for
    from twinnet.gen.generate import generate_network

    family = family or family_for(network)
    files = generate_network(network, Path(build_dir) / "rtl", family=family)
    manifest = Manifest.read(files[-1])
    section = manifest.axi_stream
    pes = len(manifest.terminals)
    dest_width = next(port["width"] for port in section["pes"][0]["slave"]
                      if port["name"].endswith("_tdest"))
    return {"pes": pes, "data_bytes": section["data_bytes"], "id_width": section["id_width"],
            "user_width": section["user_width"], "packet_beats": section["packet_beats"],
            "max_frame_bytes": section["max_frame_bytes"], "dest_width": dest_width,
            "sizes": [1, section["max_frame_bytes"]], "frames": max(12, pes),
            "bad_dest": 2 if pes < 1 << dest_width else 0, "oversize": 2, "pause": 0.3,
            "seed": 1, "ordered": family.in_order(network),
            "separate_clocks": network.ni_clock == "separate"}


def run_prepared(simulator: str, build_dir, config: dict, *, testcase: str = "frames",
                 run_dir=None, waves: bool | None = None) -> dict:
    """Build (once: an unchanged build is reused) the AXI4-Stream top :func:`prepare` wrote
    into ``build_dir`` on ``simulator`` and run the test ``testcase`` with ``config``, its
    configuration and results in ``run_dir`` (default ``build_dir``; runs of one build may go
    on at once, each in its own). Returns what the test wrote in ``results.json``; raises
    ``AssertionError`` when a check fails."""
    from . import network_sim, runner

    build_dir = Path(build_dir)
    run_dir = Path(run_dir) if run_dir is not None else build_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    files = sorted((build_dir / "rtl").glob("*.v"))
    manifest = Manifest.read(next((build_dir / "rtl").glob("*.manifest.json")))
    blocks = network_sim.hierarchy_blocks(manifest.modules, len(manifest.routers))
    runner.run(simulator=simulator, toplevel=manifest.axi_stream["top"],
               test_module=TEST_MODULE, testcase=testcase, build_dir=build_dir,
               config=config, sources=files, hier_blocks=blocks,
               log=True, waves=waves, run_dir=run_dir)
    return json.loads((run_dir / "results.json").read_text())


def simulate_frames(network, simulator: str, build_dir, *, family=None,
                    waves: bool | None = None, **settings) -> dict:
    """Generate ``network`` into ``build_dir/rtl``, build its AXI4-Stream top on
    ``simulator`` in ``build_dir`` and run the test ``frames`` with ``settings`` over
    :func:`prepare`'s defaults; ``waves`` dumps waveforms (:func:`twinnet.sim_tb.runner.run`).
    Returns the settings used (``config``), frames ``delivered``, the network's ``cycles``
    and each interface's ``counters``. Raises ``AssertionError`` when a check fails."""
    config = {**prepare(network, build_dir, family=family), **settings}
    results = run_prepared(simulator, build_dir, config, waves=waves)["frames"]
    return {"config": config, **results}
