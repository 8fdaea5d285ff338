"""``twinnet demo``: the README's main job.

Generates the default network — the 3DT twin torus 4×4×4 in configuration D with bubble flow
control (preset ``3dt-4x4x4``) — simulates uniform random traffic on it (Verilator by default)
and prints packets delivered, mean latency and throughput, every packet and hop checked
against the reference model.
"""

from . import gen_cmd, sim_cmd
from .report import Report, add_json_flag
from .run_settings import add_settings, resolve

#: The default network: a preset (:func:`twinnet.families.presets`), built as ``--preset``
#: builds it.
DEFAULT_PRESET = "3dt-4x4x4"


def register(commands) -> None:
    parser = commands.add_parser(
        "demo", help="generate and simulate the default network (3DT 4x4x4, D, bubble)",
        description="Generate the default network (3DT 4x4x4, configuration D, bubble flow "
                    "control), simulate uniform random traffic and print packets delivered, "
                    "latency and throughput, every hop checked against the model. Same as "
                    "'twinnet sim --preset 3dt-4x4x4 --check hops --packets 5000'.")
    add_settings(parser, sim_cmd.TRAFFIC_SETTINGS, packets=5000, check="hops")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def run(args) -> Report:
    resolve(args)
    network = gen_cmd.network_from_words(["--preset", DEFAULT_PRESET])
    return sim_cmd.simulate_uniform(network, args)
