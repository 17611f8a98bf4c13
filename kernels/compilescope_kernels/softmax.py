"""Fused row-wise softmax: one Triton program reads a row once, writes it once."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from compilescope_kernels._launch import check_launchable

# A row is held in one block of registers; past this many elements it would spill (and Triton
# caps a block at 2**20 elements), so longer rows need a looped kernel, which this one is not.
MAX_COLS = 1 << 16


@triton.jit
def softmax_kernel(
    out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr
):
    # One program per row. int64 so that row * stride cannot overflow on big tensors.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    # BLOCK_SIZE is the next power of two above n_cols; the padding lanes read -inf, so that
    # they neither win the max nor add to the sum (exp(-inf) == 0).
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    # Compute in fp32 whatever the storage type: fp16 exp/sum lose too many bits.
    x = x.to(tl.float32)
    # Subtracting the row max leaves softmax unchanged and keeps exp() from overflowing.
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    denominator = tl.sum(numerator, axis=0)
    y = numerator / denominator
    # The whole row stayed in registers: one read and one write of memory, where eager PyTorch
    # reads the input for the max, again for exp/sum, and once more to normalize.
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor, *, kernel: Any = softmax_kernel) -> torch.Tensor:
    """Softmax of `x` over its last dimension, by `softmax_kernel`.

    `kernel` is the kernel to launch; inside a torch custom op it is `wrap_triton(softmax_kernel)`
    (see ops.py), which lets torch.compile trace the launch.
    """
    check_launchable(kernel, x)
    n_cols = x.shape[-1]
    if n_cols > MAX_COLS:
        raise ValueError(
            f"softmax: rows of {n_cols} elements; this kernel holds at most {MAX_COLS}"
        )
    if x.numel() == 0:  # nothing to launch (and reshape(-1, 0) is ambiguous)
        return torch.empty(x.shape, dtype=x.dtype, device=x.device)
    x2 = x.reshape(-1, n_cols)
    if x2.stride(-1) != 1:  # the kernel reads a row as consecutive elements
        x2 = x2.contiguous()
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    y2 = y.view(-1, n_cols)
    block_size = triton.next_power_of_2(n_cols)
    # More warps for longer rows, so each thread keeps a few elements rather than many.
    num_warps = 16 if block_size >= 4096 else 8 if block_size >= 2048 else 4
    kernel[(y2.shape[0],)](
        y2, x2, x2.stride(0), y2.stride(0), n_cols, BLOCK_SIZE=block_size, num_warps=num_warps
    )
    return y


def reference_softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension in plain PyTorch (fp16/bf16 inputs are computed in fp32)."""
    return torch.softmax(x, dim=-1)
