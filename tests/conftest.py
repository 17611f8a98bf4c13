"""Shared test setup: the recorded fixtures and helpers to open them."""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# jsonschema imports rfc3987_syntax, where installed (nbformat's jsonschema[format-nongpl] brings
# it), for its "iri" format check only, and that module builds some 35 Earley parsers as it is
# imported: 2.7 CPU-s of the 3.3 s `import nbformat` takes here, in every pytest process
# (python-jsonschema/jsonschema#1428). No schema the tests validate uses "iri"; without the
# module, jsonschema leaves that one format unchecked.
sys.modules.setdefault("rfc3987_syntax", None)

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
# Triton reads TRITON_INTERPRET when it is first imported, and collecting the torch tests can
# import it (through torch._inductor) long before the kernel tests run: set it for the session.
os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(TESTS))  # workloads, fidelity, tlparse_reference, magic.conftest
# capturing() leaves torch's caches on (as the user's run would): one empty cache folder per
# test run (and the kernels and notebooks it starts), so no run finds another's warm cache
# (torch's default folder outlives a CI clone). A test that needs a cold compile says
# fresh=True; one that needs a warm cache makes its own. A run's processes share its folder:
# `make test`'s two tiers (it makes the folder) and the pytest-xdist workers (they inherit this
# environment). Which files a process ran before a test is not fixed anyway, and torch writes
# its caches for many processes at once (its compile workers). Shared, torch's one-time check
# of the C++ compiler (about 6 s) runs once a run: in clean clones the untimed tier took 424 s
# with a folder per process, 410-417 s (three runs) with one.
_CACHE = os.environ.get("COMPILESCOPE_TESTS_CACHE", "")
_MADE_HERE = not _CACHE  # then this process removes it at the end (`make test` removes its own)
if _MADE_HERE:
    _CACHE = os.environ["COMPILESCOPE_TESTS_CACHE"] = tempfile.mkdtemp(prefix="cs-tests-inductor-")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = _CACHE
os.environ["TRITON_CACHE_DIR"] = os.path.join(_CACHE, "triton")
# torch's check of which vector instructions the C++ compiler can build (about 5.5 s of g++ per
# empty cache folder, torch/_inductor/cpu_vec_isa.py) is torch's, not ours: the processes the
# tests start take the CPU's own list instead (`TORCHINDUCTOR_VEC_ISA_OK=1`; on our machines
# both pick the same AVX-512 VNNI). It ran first in the timed tier, and three times in tutorial
# 11, whose fresh cache folders are the point. Our own call of the check, before a capture's
# fresh folder, is tested with the check replaced (tests/live/test_capture_caches.py).
os.environ.setdefault("TORCHINDUCTOR_VEC_ISA_OK", "1")
# Inductor's C++ compiler, for the processes the tests start: g++ with a cache of the kernel
# libraries it builds (tests/compiler_cache/g++ says how), in this run's folder, or in the one
# COMPILESCOPE_TESTS_CXX_CACHE names for many runs (`make test`'s). Every capture compiles cold
# in a fresh folder, so the tests built the same kernels again and again (100 of 421 g++ runs
# in the untimed tier, 53 of its 190 CPU-s of g++). Torch still writes each kernel and calls the
# compiler; a kernel already built with the same key comes back from the cache. It is
# found as `g++` on PATH, the name torch calls (CXX unset): torch's command lines, and so the
# keys of its precompiled headers, stay those of a run without it (named by its path in CXX, it
# made torch build a new 158 MB header for each clone: 5 s of tutorial 05 in the timed tier).
# A process the tests start finds it there already.
# With CXX set, torch calls that compiler, as it is.
_COMPILER_CACHE = str(TESTS / "compiler_cache")
if "CXX" not in os.environ and shutil.which("g++") and _COMPILER_CACHE not in os.environ["PATH"]:
    os.environ["PATH"] = os.pathsep.join([_COMPILER_CACHE, os.environ["PATH"]])

WORKLOAD_FIXTURES = (
    "plain_function",
    "module_backward",
    "graph_break",
    "recompile",
    "dynamic_shapes",
    "inference",
    "compiled_autograd",
    "gpt2",
)
# Recorded on the GPU machine (H100, torch 2.11, Triton 3.6) by benchmarks/recorders/gpu_check.py.
PARSER_FIXTURES = (*WORKLOAD_FIXTURES, "gpu_module_backward")


def unpacked(name: str, directory: Path) -> Path:
    """Fixture NAME.log.gz decompressed into `directory` (tlparse reads plain files)."""
    target = directory / f"{name}.log"
    with gzip.open(FIXTURES / f"{name}.log.gz", "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return target


@pytest.fixture(scope="session")
def ip():
    """A real IPython shell (IPython.testing.globalipapp) with compilescope loaded."""
    from IPython.testing import globalipapp

    # One test shell per process: start_ipython() returns None once another test started it.
    globalipapp.start_ipython()
    shell = globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "compilescope")
    # torch's own lazy TORCH_TRACE handler removes itself at the first compile of a process
    # (no TORCH_TRACE set); compile once first so state comparisons see only our changes.
    shell.run_cell(
        "import torch\ntorch.manual_seed(0)\n"
        "torch.compile(lambda a: a + 1, backend='eager')(torch.ones(1))"
    )
    return shell


@pytest.fixture(scope="session")
def loaded():
    """Fixture name -> Capture read from its recorded log (each read once per session)."""
    from compilescope import load_trace

    cache: dict = {}

    def load(name: str):
        if name not in cache:
            cache[name] = load_trace(FIXTURES / f"{name}.log.gz")
        return cache[name]

    return load


# The timed tier (`make test`: `-m timing`) imports only the test files that can hold a timing
# test: collecting all of them to keep 9 tests took 13 s of its 95 s. A file holds one only if
# it says `mark.timing` (`@pytest.mark.timing`, `marks=pytest.mark.timing`, `pytestmark = ...`);
# test_conftest.py checks that every timing test the untimed tier collects is in such a file.
TIMING_SAYS = "mark.timing"


def pytest_ignore_collect(collection_path, config):
    if config.getoption("markexpr") != "timing":
        return None
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    return TIMING_SAYS not in collection_path.read_text()


# Files with a timing test, as collected before `-m` deselects them (for test_conftest.py).
FILES_WITH_TIMING_TESTS: set[Path] = set()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    FILES_WITH_TIMING_TESTS.update(Path(i.fspath) for i in items if i.get_closest_marker("timing"))


def pytest_unconfigure(config):
    if _MADE_HERE and not hasattr(config, "workerinput"):  # the run's folder, not a worker's
        shutil.rmtree(_CACHE, ignore_errors=True)
