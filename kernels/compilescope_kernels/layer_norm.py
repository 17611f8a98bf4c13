"""Layer norm forward (with weight and bias): one Triton program normalizes one row."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from compilescope_kernels._launch import check_launchable


@triton.jit
def layer_norm_fwd_kernel(
    x_ptr, y_ptr, w_ptr, b_ptr, x_row_stride, y_row_stride, n_cols, eps,
    BLOCK_SIZE: tl.constexpr, ROW_IN_ONE_BLOCK: tl.constexpr,
):  # fmt: skip
    # One program per row. int64 so that row * stride cannot overflow on big tensors.
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * x_row_stride
    y_ptr += row * y_row_stride

    if ROW_IN_ONE_BLOCK:
        # The row fits in one block: read it from memory once and keep it in registers for the
        # mean, the variance and the output (Inductor's "persistent" reduction does the same).
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)  # statistics in fp32
        mean = tl.sum(x, axis=0) / n_cols
        # Padding lanes read 0, and 0 - mean is not 0: mask them out of the variance.
        d = tl.where(mask, x - mean, 0.0)
        # Variance of x - mean (two passes over registers): more accurate than
        # E[x^2] - E[x]^2, which cancels badly when the mean is large.
        var = tl.sum(d * d, axis=0) / n_cols  # biased (divide by n), as torch's layer_norm
        rstd = 1 / tl.sqrt(var + eps)
        w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
        tl.store(y_ptr + cols, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        # A longer row is walked in BLOCK_SIZE chunks, three times (mean, variance, output),
        # with per-lane partial sums in fp32 and one reduction across lanes per pass. The
        # second and third reads mostly come from L2, but they still cost (benchmarks/RESULTS.md).
        acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            acc += tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / n_cols

        acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            d = tl.where(cols < n_cols, x - mean, 0.0)  # as above: padding must not count
            acc += d * d
        var = tl.sum(acc, axis=0) / n_cols
        rstd = 1 / tl.sqrt(var + eps)

        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            mask = cols < n_cols
            w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
            b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
            x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            y = (x - mean) * rstd * w + b
            tl.store(y_ptr + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def layer_norm(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float = 1e-5,
    *,
    block_size: int | None = None,
    kernel: Any = layer_norm_fwd_kernel,
) -> torch.Tensor:
    """Layer norm of `x` over its last dimension, `(x - mean) / sqrt(var + eps) * weight + bias`.

    `block_size` (a power of two) overrides the chunk each program reads at a time (rows longer
    than it are looped over); `kernel` is the kernel to launch (`wrap_triton(...)` of it inside
    a torch custom op).
    """
    check_launchable(kernel, x, weight, bias)
    n_cols = x.shape[-1]
    if weight.shape != (n_cols,) or bias.shape != (n_cols,):
        raise ValueError(f"layer_norm: weight and bias must have shape ({n_cols},)")
    if x.numel() == 0:  # nothing to launch (and reshape(-1, 0) is ambiguous)
        return torch.empty(x.shape, dtype=x.dtype, device=x.device)
    x2 = x.reshape(-1, n_cols)
    if x2.stride(-1) != 1:  # the kernel reads a row as consecutive elements
        x2 = x2.contiguous()
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    y2 = y.view(-1, n_cols)
    if block_size is None:
        # Rows up to 64 KB are held in registers in one block; longer rows are looped over.
        block_size = min(65536 // x.element_size(), triton.next_power_of_2(n_cols))
    # More warps for bigger blocks, so each thread keeps a few elements rather than many.
    num_warps = 16 if block_size >= 4096 else 8 if block_size >= 2048 else 4
    kernel[(y2.shape[0],)](
        x2,
        y2,
        weight.contiguous(),
        bias.contiguous(),
        x2.stride(0),
        y2.stride(0),
        n_cols,
        eps,
        BLOCK_SIZE=block_size,
        ROW_IN_ONE_BLOCK=block_size >= n_cols,
        num_warps=num_warps,
    )
    return y


def reference_layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """Layer norm over the last dimension in plain PyTorch (fp16/bf16 are computed in fp32)."""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)
