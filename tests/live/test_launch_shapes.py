"""Grid, block and registers of GPU kernels, read from a real profiler chrome trace (H200)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch

EVENTS = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "gpu_kernel_trace_events.json").read_text()
)


def test_known_kernels_get_their_launch_shape():
    from compilescope.live.timing.profiler_times import launch_shapes

    shapes = launch_shapes(EVENTS, {"triton_red_fused_sum_view_0", "triton_per_fused_sum_view_1"})
    assert shapes == {
        "triton_red_fused_sum_view_0": ((128, 1, 1), (128, 1, 1), 24),
        "triton_per_fused_sum_view_1": ((4, 1, 1), (128, 1, 1), 26),
    }


def test_other_events_and_unknown_kernels_are_ignored():
    from compilescope.live.timing.profiler_times import launch_shapes

    names = {e["name"] for e in EVENTS}  # cpu ops, runtime calls and cuBLAS kernels included
    shapes = launch_shapes(EVENTS, names)
    kernels = {e["name"] for e in EVENTS if e["cat"] == "kernel"}
    assert set(shapes) == kernels
    assert launch_shapes(EVENTS, set()) == {}
    broken = [{"cat": "kernel", "name": "k", "args": {"grid": "not a list"}}]
    assert launch_shapes(broken, {"k"}) == {}
