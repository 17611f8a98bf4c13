"""Big multi-rank logs: kernels are split on first use, and memory stays a small multiple."""

from __future__ import annotations

import dataclasses
import sys
import tracemalloc
from pathlib import Path

from compilescope import Capture, load_trace
from compilescope.model.lazy import LazyTuple
from conftest import FIXTURES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from suites.big_logs import make_big_log  # noqa: E402


def test_kernels_are_split_on_first_use_and_equal_to_the_saved_ones():
    cap = load_trace(FIXTURES / "module_backward.log.gz")
    code = cap["0/0"].output_code[0]
    assert isinstance(code.kernels, LazyTuple) and not code.kernels.loaded
    assert code.role == "forward"  # known without splitting
    again = Capture.from_json(cap.to_json())
    assert code.kernels.loaded and again == cap and again["0/0"].output_code[0] == code
    assert cap["0/0"].kernels[0].fused_nodes  # provenance attached when split
    first = dataclasses.replace(code.kernels[0], name="renamed")
    replaced = dataclasses.replace(code, kernels=(first, *code.kernels[1:]))
    assert replaced.kernels[0].name == "renamed" and replaced != code


def test_a_multi_rank_log_opens_with_memory_under_three_times_its_size(tmp_path):
    total = make_big_log(tmp_path, ranks=2, copies=2)  # about 11 MB of the GPT-2 log
    tracemalloc.start()
    try:
        cap = load_trace(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    one = load_trace(FIXTURES / "gpt2.log.gz")
    assert cap.ranks == (0, 1) and len(cap) == 4 * len(one)
    assert peak <= 3 * total, f"peak {peak / 1e6:.1f} MB for a {total / 1e6:.1f} MB log"
    # Every copy is its own compile: the frame ids were shifted, not repeated.
    assert len(set(cap.compile_ids)) == len(cap)
    report = cap.compare_ranks()
    assert not report.diverged, report.summary()
