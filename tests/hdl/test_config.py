"""RouterConfig/PortConfig/FlitFormat validation: every bad parameter fails before elaboration
with a message naming the parameter, the value and what is allowed."""

import gc
import json
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable
from amaranth.lib import data

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.flit import FlitFormat
from twinnet.hdl.header_route import HeaderRouteCompute
from twinnet.hdl.router import Router


def net(**kwargs):
    return PortConfig("network", **kwargs)


def test_buffer_shorter_than_a_packet():
    with pytest.raises(ValueError, match=r"ports\[1\]\.buffer_depth must be >= 4 flits to hold "
                                         r"one packet of 4 flits, not 3"):
        RouterConfig(32, 4, (net(buffer_depth=4), net(buffer_depth=3)))


def test_bubble_port_needs_two_packets():
    with pytest.raises(ValueError, match=r"ports\[0\]\.buffer_depth must be >= 8 flits to hold "
                                         r"two packets \(bubble flow control\).*not 7"):
        RouterConfig(32, 4, (net(buffer_depth=7, bubble=True),))
    RouterConfig(32, 4, (net(buffer_depth=8, bubble=True),))  # exactly 2L is enough


def test_zero_ports():
    with pytest.raises(ValueError, match=r"ports must list at least 1 port, not 0"):
        RouterConfig(32, 4, ())


def test_ports_must_be_port_configs():
    with pytest.raises(TypeError, match=r"ports\[0\] must be a PortConfig, not 5"):
        RouterConfig(32, 4, (5,))
    with pytest.raises(TypeError, match=r"ports must be a sequence of PortConfig"):
        RouterConfig(32, 4, net())


def test_vc_count_zero():
    with pytest.raises(ValueError, match=r"vc_count must be an integer >= 1, not 0"):
        PortConfig("network", vc_count=0)


def test_vc_count_type():
    with pytest.raises(TypeError, match=r"vc_count must be an integer, not 2\.0"):
        PortConfig("network", vc_count=2.0)


def test_role():
    with pytest.raises(ValueError, match=r"role must be one of 'network', 'internal', 'pe', "
                                         r"not 'link'"):
        PortConfig("link")


def test_bubble_on_pe_port():
    with pytest.raises(ValueError, match=r"bubble must be False for a 'pe' port"):
        PortConfig("pe", bubble=True)


def test_packet_length_and_flit_width():
    with pytest.raises(ValueError, match=r"max_packet_length must be an integer >= 1, not 0"):
        RouterConfig(32, 0, (net(),))
    with pytest.raises(ValueError, match=r"flit_width must be an integer >= 1, not 0"):
        RouterConfig(0, 4, (net(),))


def test_flit_too_narrow_for_header():
    # 5 ports -> 3 port bits, 2 VCs -> 1 VC bit, 1 bubble bit, 3 source bits = 8 bits.
    config = RouterConfig(7, 2, (*[net(vc_count=2)] * 4, PortConfig("pe")), source_width=3)
    with warnings.catch_warnings():
        # The rejected router's route computes were built and never elaborated: Amaranth
        # says so when they are collected, here rather than in some later test.
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ValueError, match=r"flit_width must be >= 8 bits to hold the head "
                                             r"flit's header \(route 5 \+ tag 0 \+ source 3 "
                                             r"bits\), not 7"):
            Router(config, HeaderRouteCompute)
        gc.collect()


def test_route_layout_type():
    config = RouterConfig(32, 2, (net(),))
    with pytest.raises(TypeError, match=r"route_layout must be an amaranth data.StructLayout"):
        FlitFormat(config, 5)


def test_round_trip_and_derived_values():
    config = RouterConfig(32, 3, (net(vc_count=3, buffer_depth=6, bubble=True),
                                  PortConfig("internal", vc_count=2, buffer_depth=3),
                                  PortConfig("pe", vc_count=2, buffer_depth=4, name="pe0")),
                          source_width=4, tag_width=2)
    again = RouterConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config
    assert config.port_count == 3
    assert config.vc_counts == (3, 2, 2)
    assert config.output_vc_counts == (3, 2, 1)
    assert config.max_vc_count == 3
    assert config.pe_ports == (2,) and config.link_ports == (0, 1)
    with pytest.raises(ValueError, match=r"unknown router configuration keys \['depth'\]"):
        RouterConfig.from_dict({**config.to_dict(), "depth": 3})


def test_head_layout_description():
    config = RouterConfig(32, 3, (net(vc_count=3, buffer_depth=6), PortConfig("pe")),
                          source_width=4, tag_width=2)
    fmt = FlitFormat(config, data.StructLayout({"x": 3, "y": 3}))
    described = json.loads(json.dumps(fmt.describe()))
    head = {f["name"]: (f["offset"], f["width"]) for f in described["head"]}
    # Route fields first (lowest bits), then kind, source, payload: worked out by hand.
    assert head == {"route.x": (0, 3), "route.y": (3, 3), "tag": (6, 2), "source": (8, 4),
                    "payload": (12, 20)}
    link = {f["name"]: (f["offset"], f["width"]) for f in described["ports"][0]["in"]}
    assert link == {"data": (0, 32), "first": (32, 1), "last": (33, 1), "abort": (34, 1),
                    "vc": (35, 2)}
    assert described["ports"][0]["credit_width"] == 2
    pe_out = {f["name"] for f in described["ports"][1]["out"]}
    assert pe_out == {"data", "first", "last", "abort"}


@pytest.mark.parametrize("knobs, message", [
    ({"iterations": 2}, r"iterations 2: more than one round of matching needs allocator islip, "
                        r"not round-robin"),
    ({"hold": "flit"}, r"hold flit: the split router \(pipeline 3\) takes only packet"),
    ({"switch_inputs": "port"}, r"switch_inputs port: the split router \(pipeline 3\) takes "
                                r"only vc"),
    ({"allocator": "slip"}, r"allocator must be one of 'round-robin', 'islip', not 'slip'"),
    ({"iterations": 5, "allocator": "islip"}, r"iterations must be an integer from 1 to 4, "
                                              r"not 5"),
    ({"pipeline": 2, "ejection_lanes": 2}, r"ejection_lanes 2: more than one ejection lane needs "
                                           r"the split router \(pipeline 3\), not pipeline 2"),
    ({"ejection_lanes": 9}, r"ejection_lanes must be an integer from 1 to 8, not 9"),
    ({"ejection_lanes": 0}, r"ejection_lanes must be an integer from 1 to 8, not 0"),
    ({"pipeline": 2, "hold": "wormhole"}, r"hold must be one of 'flit', 'packet', not "
                                          r"'wormhole'"),
])
def test_microarchitecture_knobs_that_do_not_go_together(knobs, message):
    with pytest.raises(ValueError, match=message):
        RouterConfig(32, 2, (PortConfig("pe", vc_count=1, buffer_depth=4),), **knobs)


def test_microarchitecture_knobs_default_to_the_pipelines_own():
    port = (PortConfig("pe", vc_count=1, buffer_depth=4),)
    split, compact = RouterConfig(32, 2, port), RouterConfig(32, 2, port, pipeline=2)
    assert (split.switch_inputs_per_vc, split.holds_outputs) == (True, True)
    assert (compact.switch_inputs_per_vc, compact.holds_outputs) == (False, False)
    both = RouterConfig(32, 2, port, pipeline=2, switch_inputs="vc", hold="packet")
    assert (both.switch_inputs_per_vc, both.holds_outputs) == (True, True)
    assert RouterConfig.from_dict(json.loads(json.dumps(both.to_dict()))) == both


def test_ejection_lanes_are_outputs_after_the_ports():
    ports = (PortConfig("network"), PortConfig("pe"), PortConfig("network"), PortConfig("pe"))
    config = RouterConfig(32, 4, ports, ejection_lanes=3)
    assert config.outputs == ((0, 0), (1, 0), (2, 0), (3, 0), (1, 1), (1, 2), (3, 1), (3, 2))
    assert (config.lanes_of(0), config.lanes_of(1), config.lanes_of(3)) == ((0,), (1, 4, 5),
                                                                              (3, 6, 7))
    assert RouterConfig(32, 4, ports).outputs == ((0, 0), (1, 0), (2, 0), (3, 0))
    assert RouterConfig.from_dict(config.to_dict()) == config
