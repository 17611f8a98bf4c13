"""The fused softmax kernel against torch.softmax, on the CPU through Triton's interpreter."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.kernels

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# fp16/bf16 outputs are rounded once from fp32 on both sides; allow about one ulp.
TOL = {
    torch.float32: dict(atol=1e-6, rtol=1e-5),
    torch.float16: dict(atol=1e-4, rtol=1e-3),
    torch.bfloat16: dict(atol=1e-3, rtol=8e-3),
}


# Row lengths below, at, and between powers of two: the padding lanes must not count.
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (4, 128), (5, 1000), (2, 3, 33)])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matches_reference(kernels, shape, dtype):
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(0)) * 3).to(dtype)
    y = kernels.softmax.softmax(x)
    assert y.shape == x.shape and y.dtype == dtype
    torch.testing.assert_close(y, kernels.softmax.reference_softmax(x), **TOL[dtype])


def test_strided_inputs(kernels):
    base = torch.randn(5, 64, generator=torch.Generator().manual_seed(1))
    for x in (base[:, :33], base[:, ::2], base.t()):  # row stride != width; last stride != 1
        torch.testing.assert_close(kernels.softmax.softmax(x), torch.softmax(x, dim=-1))


def test_large_and_masked_values(kernels):
    # exp(1000) overflows fp32: only the max subtraction keeps these finite. -inf entries are
    # how attention masks arrive; they must come out as exactly 0.
    x = torch.randn(4, 50, generator=torch.Generator().manual_seed(2)) * 1000
    x[:, ::3] = -float("inf")
    y = kernels.softmax.softmax(x)
    assert torch.isfinite(y).all() and (y[:, ::3] == 0).all()
    torch.testing.assert_close(y, torch.softmax(x, dim=-1), **TOL[torch.float32])


def test_empty_and_too_long(kernels):
    for shape in [(0, 5), (3, 0)]:
        assert kernels.softmax.softmax(torch.empty(shape)).shape == shape
    with pytest.raises(ValueError, match="at most"):
        kernels.softmax.softmax(torch.empty(1, kernels.softmax.MAX_COLS + 1))
