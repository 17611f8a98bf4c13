"""The blocked matmul kernel against torch's matmul, on the CPU through Triton's interpreter."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.kernels

# Sums of K products in a different order: allow for that, scaled to fp16's ulp at |c| ~ 10.
TOL = {torch.float32: dict(atol=1e-4, rtol=1e-5), torch.float16: dict(atol=1e-2, rtol=2e-3)}


def operands(m, k, n, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(m, k, generator=g).to(dtype), torch.randn(k, n, generator=g).to(dtype)


# The CPU tiles are 32x32x32: shapes below, at, and across tile edges, and a ragged K.
@pytest.mark.parametrize(
    "mkn", [(16, 16, 16), (32, 32, 32), (67, 45, 70), (1, 100, 1), (33, 1, 65)]
)
# No bf16 here: Triton 3.7's interpreter keeps bf16 as uint16 and multiplies those integers in
# tl.dot (interpreter.py, create_dot); bf16 is checked on the GPU (benchmarks/recorders/gpu_kernels.py).
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_matches_reference(kernels, mkn, dtype):
    a, b = operands(*mkn, dtype)
    c = kernels.matmul.matmul(a, b)
    assert c.shape == (mkn[0], mkn[2]) and c.dtype == dtype
    torch.testing.assert_close(c, kernels.matmul.reference_matmul(a, b), **TOL[dtype])


def test_transposed_operands(kernels):
    a, b = operands(40, 50, 60, torch.float32, seed=1)
    at, bt = a.t().contiguous().t(), b.t().contiguous().t()  # same values, column-major
    expected = kernels.matmul.reference_matmul(a, b)
    torch.testing.assert_close(kernels.matmul.matmul(at, bt), expected, **TOL[torch.float32])


def test_grouped_tile_order(kernels):
    # 16x16 tiles, groups of 3 rows of tiles over 7 rows: the last group is short (7 = 2*3 + 1),
    # and every tile of C must still be computed exactly once.
    a, b = operands(100, 40, 90, torch.float32, seed=2)
    cfg = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 3}
    c = kernels.matmul.matmul(a, b, config=cfg)
    torch.testing.assert_close(c, kernels.matmul.reference_matmul(a, b), **TOL[torch.float32])


def test_empty_k_and_bad_operands(kernels):
    a, b = operands(5, 0, 7, torch.float32)
    assert torch.equal(kernels.matmul.matmul(a, b), torch.zeros(5, 7))
    with pytest.raises(ValueError, match="multiply"):
        kernels.matmul.matmul(*operands(3, 4, 5, torch.float32)[::-1])
    with pytest.raises(ValueError, match="dtypes"):
        kernels.matmul.matmul(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float16))
    # 2**32 elements of C would overflow the kernel's 32-bit offsets (expanded: no memory used).
    with pytest.raises(ValueError, match="2\\*\\*31"):
        kernels.matmul.matmul(torch.ones(1, 1).expand(2**16, 1), torch.ones(1, 1).expand(1, 2**16))
