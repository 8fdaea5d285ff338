"""The simulator glue's build set-up (:mod:`twinnet.sim_tb.runner`)."""

import shutil

import pytest

from twinnet.sim_tb import network_sim, runner


@pytest.fixture
def fresh_cache_choice():
    runner.compiler_cache.cache_clear()
    yield
    runner.compiler_cache.cache_clear()


@pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache is not installed")
def test_ccache_only_where_it_can_write(tmp_path, monkeypatch, fresh_cache_choice):
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "cache"))  # made on first use
    assert runner.compiler_cache() == ["OBJCACHE=ccache"]
    runner.compiler_cache.cache_clear()
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CCACHE_DIR", str(blocker / "cache"))  # ccache would fail every compile
    assert runner.compiler_cache() == []


def test_precompiled_headers_are_discarded_and_nothing_else(tmp_path):
    (tmp_path / "block").mkdir()
    for name in ("Vtop__pch.h.fast.gch", "block/Vb__pch.h.slow.gch", "Vtop__pch.h", "Vtop.o"):
        (tmp_path / name).write_text("x")
    runner.discard_precompiled_headers(tmp_path)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) \
        == ["Vtop.o", "Vtop__pch.h"]


def test_quick_builds_write_one_file_per_kind_and_default_ones_keep_their_flags(monkeypatch):
    monkeypatch.setenv(runner.QUICK_BUILD_ENV, "1")
    assert runner.quick_build() and runner.verilator_arguments() == ["--output-split", "0"]
    monkeypatch.setenv(runner.QUICK_BUILD_ENV, "0")
    assert not runner.quick_build() and runner.verilator_arguments() == []
    made = runner.make_variables("-O2")
    assert {"CFG_CXXFLAGS_PCH_I=-include", "OPT_FAST=-O2", "OPT_SLOW=-O0",
            "OPT_GLOBAL=-O2"} <= set(made)


def test_a_build_is_reused_only_under_the_same_make_variables(tmp_path, monkeypatch):
    source = tmp_path / "top.v"
    source.write_text("module top; endmodule\n")
    prints = set()
    for optimisation in ("-O0", "-O1"):
        monkeypatch.setenv("MAKEFLAGS", " ".join(runner.make_variables(optimisation)))
        prints.add(runner._fingerprint("verilator", "top", [source], [], False))
    assert len(prints) == 2


def test_routers_of_shared_kinds_are_hierarchy_blocks():
    def manifest(kinds):
        """The modules of routers of ``kinds`` and how many routers there are."""
        return {f"k{kind}": f"m{kind}" for kind in set(kinds)}, len(kinds)

    assert network_sim.hierarchy_blocks(*manifest([0] * 16)) == ["m0"]
    assert network_sim.hierarchy_blocks(*manifest([0, 1] * 4)) == ["m0", "m1"]
    # The king mesh KM4: 16 routers of 9 kinds build faster inlined.
    assert network_sim.hierarchy_blocks(*manifest([*range(9), *[8] * 7])) == []


@pytest.mark.parametrize("value", ["2", "-1", "yes", "false", " 1", "9" * 30])
def test_a_bad_quick_build_switch_is_one_line_before_anything_is_built(value, monkeypatch,
                                                                        tmp_path, capsys):
    from twinnet.cli.main import main

    monkeypatch.setenv(runner.QUICK_BUILD_ENV, value)
    with pytest.raises(ValueError):
        runner.quick_build()
    out = tmp_path / "out"
    assert main(["gen", "torus", "--radix", "2,2", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"twinnet: environment variable {runner.QUICK_BUILD_ENV}: {value!r} is not 0 or 1"]
    assert not out.exists()


@pytest.mark.parametrize("value, quick", [("", False), ("0", False), ("1", True)])
def test_the_quick_build_switch_takes_0_and_1(value, quick, monkeypatch):
    monkeypatch.setenv(runner.QUICK_BUILD_ENV, value)
    assert runner.quick_build() is quick
