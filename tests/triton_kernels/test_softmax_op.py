"""The softmax kernel as a torch custom op, eager and inside torch.compile (CPU, interpreter)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

pytestmark = pytest.mark.kernels


def reference_grad(x: torch.Tensor, f) -> tuple[torch.Tensor, torch.Tensor]:
    x = x.detach().requires_grad_()
    y = f(x)
    (g,) = torch.autograd.grad((y * y).sum(), x)
    return y.detach(), g


def test_interpreted_kernel_gets_the_opaque_op(kernels):
    op = kernels.ops.softmax_op()
    assert op is kernels.ops.softmax_op("custom_op")  # registered once
    assert hasattr(torch.ops.compilescope, "softmax_opaque")
    # wrap_triton cannot trace an interpreted kernel: asking for the triton_op says so.
    with pytest.raises(RuntimeError, match="interpreted"):
        kernels.ops.softmax_op("triton_op")


def test_eager_forward_and_backward(kernels):
    op = kernels.ops.softmax_op("custom_op")
    x = torch.randn(6, 45, generator=torch.Generator().manual_seed(0))
    y, g = reference_grad(x, op)
    y_ref, g_ref = reference_grad(x, kernels.softmax.reference_softmax)
    torch.testing.assert_close(y, y_ref)
    torch.testing.assert_close(g, g_ref)


@pytest.mark.torch
def test_inside_compiled_model(kernels):
    op = kernels.ops.softmax_op("custom_op")

    def model(x):
        return op(x * 2).relu() + 1

    def reference(x):
        return torch.softmax(x * 2, dim=-1).relu() + 1

    torch._dynamo.reset()
    compiled = torch.compile(model, backend="inductor", fullgraph=True)
    x = torch.randn(4, 33, generator=torch.Generator().manual_seed(1))
    y, g = reference_grad(x, compiled)
    y_ref, g_ref = reference_grad(x, reference)
    torch.testing.assert_close(y, y_ref)
    torch.testing.assert_close(g, g_ref)


def test_import_needs_no_torch_and_cpu_needs_the_interpreter():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    code = (
        "import sys, compilescope_kernels\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('torch', 'triton')]\n"
        "import torch\n"
        "from compilescope_kernels.softmax import softmax\n"
        "softmax(torch.ones(2, 3))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode != 0 and "set TRITON_INTERPRET=1" in result.stderr, result.stderr
