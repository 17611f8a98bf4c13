"""The layer norm kernel against torch's layer_norm, on the CPU through Triton's interpreter."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.kernels

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {
    torch.float32: dict(atol=1e-5, rtol=1e-5),
    torch.float16: dict(atol=2e-3, rtol=2e-3),
    torch.bfloat16: dict(atol=2e-2, rtol=2e-2),
}


def inputs(shape, dtype, seed=0, offset=0.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 2 + offset
    w = torch.randn(shape[-1], generator=g)
    b = torch.randn(shape[-1], generator=g)
    return x.to(dtype), w.to(dtype), b.to(dtype)


@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (4, 128), (5, 300), (2, 3, 33)])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matches_reference(kernels, shape, dtype):
    x, w, b = inputs(shape, dtype)
    y = kernels.layer_norm.layer_norm(x, w, b, 1e-5)
    assert y.shape == x.shape and y.dtype == dtype
    torch.testing.assert_close(
        y, kernels.layer_norm.reference_layer_norm(x, w, b, 1e-5), **TOL[dtype]
    )


# Rows longer than a block: each pass loops over chunks, the last one ragged (100 = 6*16 + 4).
@pytest.mark.parametrize("n_cols, block_size", [(100, 16), (37, 32), (64, 16)])
def test_rows_longer_than_a_block(kernels, n_cols, block_size):
    x, w, b = inputs((3, n_cols), torch.float32, seed=1)
    y = kernels.layer_norm.layer_norm(x, w, b, 1e-5, block_size=block_size)
    torch.testing.assert_close(y, kernels.layer_norm.reference_layer_norm(x, w, b, 1e-5))


# Both paths of the kernel: the row held in one block, and the row looped over in chunks.
@pytest.mark.parametrize("block_size", [None, 64])
def test_large_mean_and_eps(kernels, block_size):
    # Mean 1000, spread 2: a one-pass variance E[x^2] - E[x]^2 loses it to cancellation in fp32.
    x, w, b = inputs((4, 200), torch.float32, seed=2, offset=1000.0)
    expected = kernels.layer_norm.reference_layer_norm(x.double(), w.double(), b.double(), 0.1)
    y = kernels.layer_norm.layer_norm(x, w, b, 0.1, block_size=block_size)
    torch.testing.assert_close(y.double(), expected, atol=2e-3, rtol=1e-3)


def test_strided_input_and_bad_weight(kernels):
    x, w, b = inputs((40, 6), torch.float32, seed=3)
    xt = x.t()  # rows of 40 with a last stride of 6
    torch.testing.assert_close(
        kernels.layer_norm.layer_norm(xt, *inputs((6, 40), torch.float32)[1:]),
        kernels.layer_norm.reference_layer_norm(xt, *inputs((6, 40), torch.float32)[1:]),
    )
    with pytest.raises(ValueError, match="shape"):
        kernels.layer_norm.layer_norm(x, w[:-1], b)
    for shape in [(0, 6), (3, 0)]:
        empty = torch.empty(shape)
        out = kernels.layer_norm.layer_norm(empty, torch.ones(shape[1]), torch.zeros(shape[1]))
        assert out.shape == shape
