# compilescope: one place for the commands a developer or user runs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The newest release that passes the supported-versions matrix (README "Torch versions"), as
# users install it: on this kind of machine pip takes its CUDA build from disk, which runs on
# the CPU too. binder/requirements.txt pins the same release (its CPU build).
TORCH_PIN ?= torch==2.14.1
# The Triton that torch release pins; the kernel tests run it on the CPU (TRITON_INTERPRET=1).
# A CPU build of torch has none: `make test-torch TORCH=2.13.0 TORCH_TRITON=triton==3.7.1`.
TRITON_PIN ?= triton==3.8.0

.PHONY: test-torch help setup setup-browser setup-js js demo lab test tutorials tutorials-env test-fast lint format bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

setup: $(VENV)/.installed  ## create .venv with pinned torch and compilescope (editable) with test tools

# Installed once, again only when what it installs from changes (`make lab` twice does not
# re-run pip).
$(VENV)/.installed: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/pip install -q $(TORCH_PIN) $(TRITON_PIN)
	$(BIN)/pip install -q -e '.[test]'
	touch $@

setup-browser:  ## install Debian's chromium for the browser tests (Playwright drives it; no downloads)
	@command -v chromium >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
		else sudo apt-get update -q && sudo apt-get install -y -q chromium; fi; }

setup-js:  ## install esbuild, pinned in package-lock.json, when npm is here (for `make js` and its test)
	@if ! command -v npm >/dev/null; then \
		echo "npm not found: tests/test_js_modules.py skips its check that static/dist is up to date"; \
	elif [ ! -x node_modules/.bin/esbuild ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then \
		npm ci --no-audit --no-fund; fi

js: setup-js  ## bundle the ES modules in static/ into static/dist/ (esbuild, package.json's flags)
	npm run --silent build

demo: setup  ## capture a small model and print what torch.compile did
	$(BIN)/python -m compilescope demo

# As root (most containers) JupyterLab stops unless told --allow-root.
lab: setup  ## open JupyterLab on the quickstart tutorial (the other notebooks are beside it)
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/01_quickstart.ipynb

# The tutorials' environment, built from binder/'s files as repo2docker would, cached in
# .tutorials-venv/ by their hash (tests/notebooks/tutorial_env.py). Only the standard library
# and binder/runtime.txt's Python are needed, so it builds beside `setup`: two pip installs of
# about a minute each, one core each (`make test` runs them together).
tutorials-env:  ## build (once per binder/ change) the environment the tutorials run in
	$(PY) tests/notebooks/tutorial_env.py

# Set up (the two environments side by side), then two tiers: the few tests that assert on
# measured time, in one process with the machine to themselves (short, so first); then the
# rest on 2 workers, a file at a time (README, Tests). Both tiers use one
# empty torch cache folder (tests/conftest.py says why), removed at the end. Bytecode on:
# where the environment turns it off (PYTHONDONTWRITEBYTECODE, as some containers do), each
# pytest process rewrote every test file's asserts again, half of its 10 s of collecting.
# mypy keeps its incremental cache outside the clone, as CI services keep one between runs: it
# re-checks what changed (tests/test_lint.py, 13 s with no cache, under 1 s with one). So does
# the tests' g++ (tests/compiler_cache/g++): kernel libraries, each removed after 30 days unused.
test: setup-browser setup-js  ## set up and run the whole test suite (browser tests included)
	$(MAKE) --no-print-directory -j2 setup tutorials-env
	unset PYTHONDONTWRITEBYTECODE; \
	export MYPY_CACHE_DIR=$${XDG_CACHE_HOME:-$$HOME/.cache}/compilescope/mypy; \
	export COMPILESCOPE_TESTS_CXX_CACHE=$${XDG_CACHE_HOME:-$$HOME/.cache}/compilescope/cxx; \
	find "$$COMPILESCOPE_TESTS_CXX_CACHE" -name '*.so' -mtime +30 -delete 2>/dev/null; \
	export COMPILESCOPE_TESTS_CACHE=$$(mktemp -d /tmp/cs-tests-inductor-XXXXXXXX); \
	trap 'rm -rf "$$COMPILESCOPE_TESTS_CACHE"' EXIT; \
	$(BIN)/python -m pytest -q -m timing --durations=5 && \
	$(BIN)/python -m pytest -q -m "not timing" -n 2 --dist loadfile --durations=10

# The supported-versions matrix (README "Torch versions"): a venv of its own per release, the
# whole suite on it. A CUDA build brings the triton it pins; a CPU build gets TORCH_TRITON.
# TESTS narrows it, e.g. TESTS='-m "not browser and not tutorials"'.
TORCH ?=
TESTS ?=
TORCH_TRITON ?= $(TRITON_PIN)
TORCH_VENV := .venv-torch-$(TORCH)
test-torch: setup-browser setup-js  ## the whole suite on another torch: make test-torch TORCH=2.14.1
	@test -n "$(TORCH)" || { echo "usage: make test-torch TORCH=2.14.1 [TESTS='-m \"not browser\"']"; exit 2; }
	@test -x $(TORCH_VENV)/bin/python || $(PY) -m venv $(TORCH_VENV)
	@$(TORCH_VENV)/bin/python -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$(TORCH)')" 2>/dev/null \
		|| $(TORCH_VENV)/bin/pip install -q torch==$(TORCH)
	@$(TORCH_VENV)/bin/python -c "import triton" 2>/dev/null || $(TORCH_VENV)/bin/pip install -q $(TORCH_TRITON)
	@$(TORCH_VENV)/bin/python -c "import compilescope, pytest, tlparse" 2>/dev/null \
		|| $(TORCH_VENV)/bin/pip install -q -e '.[test]'
	@# Triton before 3.7 (torch 2.9-2.11) interprets kernels with numpy scalars that numpy 2.4
	@# refuses ("only 0-dimensional arrays can be converted to Python scalars").
	@$(TORCH_VENV)/bin/python -c "import sys, triton; sys.exit(tuple(map(int, triton.__version__.split('.')[:2])) < (3, 7))" \
		|| $(TORCH_VENV)/bin/pip install -q 'numpy<2.4'
	$(TORCH_VENV)/bin/python -m pytest -q $(TESTS)

tutorials: setup tutorials-env  ## execute every notebook in notebooks/ in a fresh env built from binder/
	$(BIN)/python -m pytest -q -m tutorials

test-fast: ## run only the tests that need no compile (model and parser tiers)
	$(BIN)/python -m pytest -q -m "not torch and not slow and not browser"

lint:  ## ruff check and format check; mypy over ext/compilescope (pyproject.toml's [tool.mypy])
	$(BIN)/ruff check ext tests benchmarks kernels
	$(BIN)/ruff format --check ext tests benchmarks kernels
	$(BIN)/mypy

format:  ## ruff fix and format
	$(BIN)/ruff check --fix ext tests benchmarks kernels
	$(BIN)/ruff format ext tests benchmarks kernels

BENCH_OUT ?= bench-out
bench: setup setup-browser  ## run the CPU suites into $(BENCH_OUT)/ (python -m benchmarks list: all suites)
	@command -v dot >/dev/null || apt-get install -y -q graphviz
	for suite in cpu-capture cpu-layout cpu-paint cpu-report; do \
		PYTHONPATH=ext:benchmarks $(BIN)/python -m benchmarks run $$suite --out $(BENCH_OUT)/$$suite || exit 1; \
	done
	PYTHONPATH=ext:benchmarks $(BIN)/python -m benchmarks results --check

clean:  ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache
