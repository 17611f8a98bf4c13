"""Kernel wrappers on a stand-in output module: every kind of call timed, sizes read, all restored."""

from __future__ import annotations

import sys
import types

import pytest
import torch
from compilescope.live.timing.flop_count import kernel_flops
from compilescope.live.timing.kernel_timer import kernel_times, wrapped_kernels
from compilescope.model.kernel import Kernel, OutputCode

pytestmark = pytest.mark.torch

SOURCE = """
import torch
from torch._inductor.select_algorithm import extern_kernels
aten = torch.ops.aten

def cpp_fused_relu_0(x, out):
    torch.clamp(x, min=0, out=out)

def call(a, b):
    buf0 = torch.empty(a.shape[0], b.shape[1])
    extern_kernels.mm(a, b, out=buf0)
    buf1 = torch.empty_like(buf0)
    cpp_fused_relu_0(buf0, buf1)
    cpp_fused_relu_0(buf1, buf0)
    return aten.neg.default(buf0)
"""


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "cfake0.py"
    path.write_text(SOURCE)
    mod = types.ModuleType("compilescope_test_output_module")
    mod.__file__ = str(path)
    exec(compile(SOURCE, str(path), "exec"), vars(mod))
    sys.modules[mod.__name__] = mod
    yield mod
    del sys.modules[mod.__name__]


def _code(path: str, role: str = "forward") -> OutputCode:
    names = ("cpp_fused_relu_0", "extern_kernels.mm", "aten.neg.default")
    kernels = tuple(Kernel(n, "extern" if "." in n else "cpp") for n in names)
    return OutputCode("", path=path, role=role, kernels=kernels)


def test_each_kind_of_call_is_timed_and_sized_and_the_module_restored(module):
    before = dict(vars(module))
    a, b = torch.randn(8, 4), torch.randn(4, 16)
    times, events = kernel_times(
        "0/0", [_code(module.__file__)], lambda: module.call(a, b), "cpu", 5
    )
    assert events == []
    by_name = {t.kernel: t for t in times}
    assert set(by_name) == {"cpp_fused_relu_0", "extern_kernels.mm", "aten.neg.default"}
    assert by_name["cpp_fused_relu_0"].calls_per_run == 2  # two call sites, one kernel
    assert by_name["extern_kernels.mm"].calls_per_run == 1
    for t in times:
        # One value per step: a name called several times a step is timed per step.
        assert t.time.repeats == 5 and t.time.median_s > 0 and t.role == "forward"
    mm = by_name["extern_kernels.mm"]
    assert mm.flops_per_call == 2 * 8 * 4 * 16
    assert mm.bytes_per_call == (8 * 4 + 4 * 16 + 8 * 16) * 4  # a, b and out, each once
    assert {k: v for k, v in vars(module).items()} == before, "every global put back"


def test_two_modules_keep_their_own_kernels(module, tmp_path):
    # A backward module with other kernels, wrapped after the forward one: the forward's nested
    # namespaces (`aten.neg` on the way to `aten.neg.default`) must still hand out its kernels.
    path = tmp_path / "cfake1.py"
    path.write_text("def cpp_fused_sum_0(x):\n    return x.sum()\n")
    other = types.ModuleType("compilescope_test_output_module_bw")
    other.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), vars(other))
    sys.modules[other.__name__] = other
    backward = OutputCode(
        "", path=str(path), role="backward", kernels=(Kernel("cpp_fused_sum_0", "cpp"),)
    )
    try:
        with wrapped_kernels([_code(module.__file__), backward], gpu=False) as logs:
            module.call(torch.randn(2, 3), torch.randn(3, 2))
            other.cpp_fused_sum_0(torch.randn(3))
    finally:
        del sys.modules[other.__name__]
    assert {key: log.calls for key, log in logs.items()} == {
        ("forward", "cpp_fused_relu_0"): 2,
        ("forward", "extern_kernels.mm"): 1,
        ("forward", "aten.neg.default"): 1,
        ("backward", "cpp_fused_sum_0"): 1,
    }


def test_flops_follow_from_shapes_by_torchs_formulas():
    a, b = torch.empty(2, 3, 5), torch.empty(2, 5, 7)
    assert kernel_flops("extern_kernels.bmm", (a, b), {}, None) == 2 * 2 * 3 * 5 * 7
    m, n = torch.empty(3, 5), torch.empty(5, 7)
    out = torch.empty(3, 7)
    assert kernel_flops("extern_kernels.mm", (m, n), {"out": out}, None) == 2 * 3 * 5 * 7
    bias = torch.empty(7)
    assert kernel_flops("extern_kernels.addmm", (bias, m, n), {"alpha": 1, "beta": 1}, None) == (
        2 * 3 * 5 * 7
    )
    x, w = torch.empty(1, 3, 8, 8), torch.empty(4, 3, 3, 3)
    out = torch.empty(1, 4, 6, 6)
    conv = {"stride": (1, 1), "padding": (0, 0), "transposed": False, "groups": 1}
    assert kernel_flops("extern_kernels.convolution", (x, w), conv, out) == (
        2 * out.numel() * 3 * 9
    )
    q = torch.empty(2, 4, 16, 8)
    assert kernel_flops(
        "aten._scaled_dot_product_flash_attention.default", (q, q, q), {}, None
    ) == (4 * 2 * 4 * 16 * 16 * 8)
    assert kernel_flops("cpp_fused_add_0", (a,), {}, None) is None
    assert kernel_flops("aten.neg.default", (a,), {}, None) is None


class _Event:
    """Stands in for torch's _KinetoEvent: the methods kernel_times_from_kineto reads."""

    def __init__(self, name, corr, linked, start, end, thread=1, gpu=False, metadata=""):
        self._v = (name, corr, linked, start, end, thread, gpu, metadata)

    def name(self):
        return self._v[0]

    def correlation_id(self):
        return self._v[1]

    def linked_correlation_id(self):
        return self._v[2]

    def start_ns(self):
        return self._v[3]

    def end_ns(self):
        return self._v[4]

    def duration_ns(self):
        return self._v[4] - self._v[3]

    def start_thread_id(self):
        return self._v[5]

    def device_type(self):
        return torch.autograd.DeviceType.CUDA if self._v[6] else torch.autograd.DeviceType.CPU

    def is_async(self):
        return False

    def metadata_json(self):
        return self._v[7]


def test_device_time_of_each_range_from_raw_profiler_events():
    from compilescope.live.timing.profiler_times import kernel_times_from_kineto

    shape = '"device": 0, "grid": [64, 1, 1], "block": [128, 1, 1], "registers per thread": 32'
    events = [
        # forward on thread 1: a Triton launch right inside our range, twice (two steps)
        _Event("compilescope::forward::triton_poi_0", 10, 0, 100, 200),
        _Event("triton_poi_0", 1, 10, 5000, 5040, gpu=True, metadata=shape),
        _Event("compilescope::forward::triton_poi_0", 11, 0, 900, 1000),
        _Event("triton_poi_0", 2, 11, 6000, 6050, gpu=True, metadata=shape),
        # the range's own GPU-side copy spans the kernel: not counted again
        _Event("compilescope::forward::triton_poi_0", 3, 10, 5000, 5040, gpu=True),
        # an extern kernel: aten::mm inside our range launched two device kernels
        _Event("compilescope::forward::extern_kernels.mm", 12, 0, 300, 400),
        _Event("aten::mm", 13, 0, 310, 390),
        _Event("gemm_a", 4, 13, 7000, 7100, gpu=True),
        _Event("gemm_b", 5, 13, 7100, 7130, gpu=True),
        # backward on the autograd thread, overlapping in time with nothing of thread 1's
        _Event("compilescope::backward::triton_red_1", 14, 0, 150, 180, thread=2),
        _Event("triton_red_1", 6, 14, 8000, 8020, gpu=True),
        # a kernel launched outside any range of ours
        _Event("aten::add", 15, 0, 500, 510),
        _Event("elementwise", 7, 15, 9000, 9999, gpu=True),
    ]
    times, launches = kernel_times_from_kineto(events)
    assert times[("forward", "triton_poi_0")] == [40e-9, 50e-9]
    assert times[("forward", "extern_kernels.mm")] == [130e-9]
    assert times[("backward", "triton_red_1")] == [20e-9]
    assert len(times) == 3, "the kernel outside our ranges is nobody's"
    assert {(e["name"], tuple(e["args"]["grid"])) for e in launches} == {
        ("triton_poi_0", (64, 1, 1))
    }


def test_work_outside_the_graphs_by_what_it_is_from_raw_profiler_events():
    """Copies by direction and memory kind, eager ops by their ATen op, a collective's exposed
    part (issue 42's step budget); what ran inside our ranges is not outside."""
    from compilescope.live.timing.profiler_times import outside_work

    events = [
        # a compiled kernel, launched inside our range: not outside
        _Event("compilescope::0/0|forward::triton_poi_0", 1, 0, 100, 200),
        _Event("triton_poi_0", 2, 1, 1000, 1100, gpu=True),
        # eager ops outside: a pageable copy, a pinned one, a mul, a device-to-host read
        _Event("aten::copy_", 10, 0, 300, 310),
        _Event("Memcpy HtoD (Pageable -> Device)", 11, 10, 2000, 6000, gpu=True),
        _Event("aten::copy_", 12, 0, 320, 330),
        _Event("Memcpy HtoD (Pinned -> Device)", 13, 12, 6000, 6500, gpu=True),
        _Event("aten::mul", 14, 0, 340, 350),
        _Event("void at::native::vectorized_elementwise_kernel<4>", 15, 14, 7000, 7300, gpu=True),
        _Event("aten::_local_scalar_dense", 16, 0, 360, 370),
        _Event("Memcpy DtoH (Device -> Pageable)", 17, 16, 9000, 9010, gpu=True),
        # an all-reduce of 1000 ns, 300 of them under the mul kernel: 700 exposed
        _Event("c10d::allreduce_", 18, 0, 380, 390),
        _Event(
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            19,
            18,
            7000,
            8000,
            gpu=True,
        ),
    ]
    works = {w.name: w for w in outside_work(events, steps=2)}
    assert set(works) == {
        "host-to-device copy (pageable)",
        "host-to-device copy (pinned)",
        "aten::mul",
        "device-to-host copy (pageable)",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
    }
    pageable = works["host-to-device copy (pageable)"]
    assert pageable.kind == "copy" and pageable.seconds == 4000 / 1e9 / 2 and pageable.calls == 0.5
    assert works["aten::mul"].kind == "eager_op" and works["aten::mul"].seconds == 300 / 1e9 / 2
    nccl = works["ncclDevKernel_AllReduce_Sum_f32_RING_LL"]
    assert nccl.kind == "collective"
    assert nccl.seconds == 700 / 1e9 / 2 and nccl.overlapped_s == 300 / 1e9 / 2
    assert list(works)[0] == "host-to-device copy (pageable)"  # costliest first
