"""The simulator glue's build set-up (:mod:`twinnet.sim_tb.runner`)."""

import shutil

import pytest

from twinnet.sim_tb import runner


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
