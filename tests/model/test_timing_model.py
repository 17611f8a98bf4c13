"""Timing model and kernel byte estimates: honest gaps, bandwidth inputs, no zeros shown as real."""

from __future__ import annotations

from compilescope.model.measured.timing import GraphTiming, KernelTiming, Sample, Timings
from compilescope.trace.output_code import split_output_code
from compilescope.views.timing_data import peak_text

TRITON_MODULE = """
# AOT ID: ['0_forward']
triton_poi_fused_relu_0 = async_compile.triton('triton_poi_fused_relu_0', \'\'\'
import triton
@triton_heuristics.pointwise(
    size_hints={'x': 1024},
    inductor_meta={'kernel_name': 'triton_poi_fused_relu_0', 'kernel_num_gb': 0.000008192},
)
@triton.jit
def triton_poi_fused_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    pass

def get_args():
    arg_0 = rand_strided((1024,), (1,), device='cuda:0', dtype=torch.float32)
    return arg_0,
\'\'\', device_str='cuda')

def call(args):
    triton_poi_fused_relu_0.run(buf0, buf1, 1024, stream=stream0)
"""


def test_triton_bytes_estimate_is_read_and_the_harness_is_not_the_kernel():
    (kernel,) = split_output_code(TRITON_MODULE).kernels
    assert kernel.bytes_moved == 8192.0
    assert "def triton_poi_fused_relu_0" in kernel.source
    assert "get_args" not in kernel.source


def sample(ms: float) -> Sample:
    return Sample(ms / 1e3, ms / 1e3, ms / 1e3, 10, 3)


def test_kernel_time_above_the_graph_time_shows_no_negative_gap():
    timings = Timings(kernels=(KernelTiming("0/0", "k", sample(2.0), 1.0),))
    assert "1.000 ms outside" in timings.gap_text("0/0", 3.0 / 1e3)
    text = timings.gap_text("0/0", 1.5 / 1e3)
    assert "no gap shown" in text and "-" not in text
    assert timings.gap_text("1/0", 1.0) == "no kernel times"


def test_peak_memory_not_measured_is_said_not_zero():
    g = GraphTiming("0/0", "timed", sample(1.0), sample(0.5))
    assert "not measured" in peak_text(g)
    measured = GraphTiming("0/0", "timed", sample(1.0), sample(0.5), "", 4096, 2048)
    assert "eager 4.0 KiB" in peak_text(measured) and "compiled 2.0 KiB" in peak_text(measured)
