"""The pre-recorded GPU captures (H200, torch 2.11, benchmarks/recorders/gpu_timings.py) load and hold what
the tutorials will show: Triton kernels joined to nodes and lines, and measured times."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import jsonschema
import pytest
from compilescope import Capture
from compilescope.model.serialize import json_schema
from compilescope.views.offline.summary_html import devices

CAPTURES = sorted(
    (Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "gpu_captures").glob("*.json.gz")
)


def test_all_four_are_there():
    assert [p.name for p in CAPTURES] == [
        "block_bfloat16.json.gz",
        "block_float32.json.gz",
        "cnn_bfloat16.json.gz",
        "cnn_float32.json.gz",
    ]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_gpu_capture(path):
    text = gzip.decompress(path.read_bytes()).decode()
    jsonschema.validate(json.loads(text), json_schema())
    cap = Capture.from_json(text)
    assert cap.torch_version.startswith("2.11")
    assert devices(cap) == "cuda (Triton kernels)"  # what the view says it ran on
    triton = [k for c in cap for k in c.kernels if k.language == "triton"]
    assert len(triton) >= 15 and all("@triton.jit" in k.source for k in triton)
    assert any(k.fused_nodes and k.source_lines for k in triton)
    timings = cap.timings
    assert timings.device == "cuda"
    (graph,) = timings.graphs
    assert graph.eager.median_s > 0 and graph.compiled.median_s > 0
    names = {k.name for k in triton}
    assert timings.kernels and all(
        k.kernel in names and k.time.median_s > 0 for k in timings.kernels
    )


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_triton_kernels_carry_ir_launch_bytes_and_peak_memory(path):
    cap = Capture.from_json(gzip.decompress(path.read_bytes()).decode())
    triton = [k for c in cap for k in c.kernels if k.language == "triton"]
    assert triton
    for k in triton:
        assert set(k.ir) == {"ttir", "ttgir", "llir", "ptx"}, k.name
        assert k.launch.get("num_warps", 0) > 0, k.name
        assert "tt.func" in k.ir["ttir"] and ".entry" in k.ir["ptx"]
    assert all(k.bytes_moved and k.bytes_moved > 0 for k in triton)
    for g in cap.timings.graphs:
        assert g.compiled_peak_bytes and g.compiled_peak_bytes > 0
        assert g.eager_peak_bytes and g.eager_peak_bytes > 0


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_kernels_launched_as_their_config_says(path):
    # Two sources that must agree: the config Inductor's autotuner chose (Kernel.launch) and
    # the grid and block the profiler saw the GPU launch (KernelTiming).
    import re

    cap = Capture.from_json(gzip.decompress(path.read_bytes()).decode())
    kernels = {(str(c.id), k.name): k for c in cap for k in c.kernels if k.language == "triton"}
    for k in kernels.values():  # forward and backward: every kernel ran in the captured step
        assert k.launch.get("XBLOCK", 0) > 0 and k.launch.get("registers", 0) > 0, k.name
    timed = [t for t in cap.timings.kernels if (t.compile_id, t.kernel) in kernels]
    assert timed
    checked = 0
    for t in timed:
        k = kernels[(t.compile_id, t.kernel)]
        assert len(t.grid) == 3 and len(t.block) == 3 and t.registers, t.kernel
        assert t.block == (32 * k.launch["num_warps"], 1, 1), t.kernel
        numel = re.search(r"^\s*xnumel = (\d+)$", k.source, re.M)
        if numel and "YBLOCK" not in k.launch:
            assert t.grid[0] == -(-int(numel.group(1)) // k.launch["XBLOCK"]), t.kernel
            checked += 1
    assert checked >= len(timed) // 2


def test_the_kernel_pane_gets_the_launch_shape_and_config():
    from compilescope.views.view_data import capture_data

    cap = Capture.from_json(gzip.decompress(CAPTURES[0].read_bytes()).decode())
    kernels = [k for c in capture_data(cap)["compiles"] for k in c["kernels"]]
    timed = [k for k in kernels if k["time"] and k["lang"] == "triton"]
    assert timed and all(len(k["grid"]) == 3 and k["registers"] for k in timed)
    assert all("XBLOCK" in k["launch"] for k in kernels if k["lang"] == "triton")


def test_the_schema_covers_timings():
    data = json.loads(gzip.decompress(CAPTURES[0].read_bytes()).decode())
    assert data["timings"]["kernels"][0]["grid"]
    jsonschema.validate(data, json_schema())
    data["timings"]["kernels"][0]["grid"] = ["wide"]
    with pytest.raises(jsonschema.ValidationError, match="'wide' is not of type 'integer'"):
        jsonschema.validate(data, json_schema())
