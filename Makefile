# compilescope: one place for the commands a developer or user runs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The CPU build on this kind of machine; an unpinned torch pulls a multi-GB CUDA build.
TORCH_PIN ?= torch==2.13.0

.PHONY: help setup demo lab test test-fast lint format bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

setup: $(BIN)/python  ## create .venv with pinned CPU torch and compilescope (editable) with test tools
	$(BIN)/pip install -q $(TORCH_PIN)
	$(BIN)/pip install -q -e '.[test]'

demo: setup  ## capture a small model and print what torch.compile did
	$(BIN)/python -m compilescope demo

lab: setup  ## open JupyterLab on the notebooks
	$(BIN)/pip install -q jupyterlab
	$(BIN)/jupyter lab notebooks/

test: setup  ## set up and run the whole test suite
	$(BIN)/python -m pytest -q

test-fast: ## run only the tests that need no compile (model and parser tiers)
	$(BIN)/python -m pytest -q -m "not torch and not slow"

lint:  ## ruff check and format check
	$(BIN)/ruff check ext tests benchmarks
	$(BIN)/ruff format --check ext tests benchmarks

format:  ## ruff fix and format
	$(BIN)/ruff check --fix ext tests benchmarks
	$(BIN)/ruff format ext tests benchmarks

bench: setup  ## run the capture benchmarks and print figures for benchmarks/RESULTS.md
	$(BIN)/python benchmarks/bench_capture.py

clean:  ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache
