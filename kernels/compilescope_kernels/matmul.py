"""Blocked matrix multiplication C = A @ B: each Triton program computes one tile of C in fp32."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from compilescope_kernels._launch import check_launchable


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, INPUT_PRECISION: tl.constexpr,
):  # fmt: skip
    # Map the 1-D program id to a tile (pid_m, pid_n) of C, in groups of GROUP_M rows of tiles:
    # programs that run at the same time then share rows of A and columns of B, and those
    # tiles are served from L2 instead of being read again from memory.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)  # the last group may be shorter
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # Rows and columns past the edge of C wrap around (% M, % N) to rows and columns that exist,
    # rather than being masked: the loads of A and B then need a mask along K only, and the
    # results for the wrapped rows and columns are dropped by the store's mask. (As Triton's
    # matmul tutorial and Inductor's mm template do.)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    # Strides, not shapes, address the elements: transposed (non-contiguous) inputs work as is.
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    # Accumulate in fp32 whatever the input type: summing K products in fp16 loses precision.
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        # The ragged end of K reads 0, which adds nothing to the dot.
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c = acc.to(c_ptr.dtype.element_ty)  # one rounding, at the end
    # Unwrapped offsets for the store: the tile's own rows and columns, masked at the edges.
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def _config(a: torch.Tensor) -> dict[str, int]:
    """Tile sizes and launch settings: fixed choices, no autotuning (a reference, not a library)."""
    if a.device.type == "cpu":
        # The interpreter runs a tile as numpy operations: small tiles keep small test shapes
        # spread over several tiles, so the edge masks are exercised.
        return {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "num_warps": 4}
    if a.dtype == torch.float32:
        # fp32 without TF32 runs on the CUDA cores, not the tensor cores: smaller tiles.
        return dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=3)
    return dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)


def matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    config: dict[str, int] | None = None,
    kernel: Any = matmul_kernel,
) -> torch.Tensor:
    """`a @ b` for 2-D `a` (M, K) and `b` (K, N) of the same dtype (fp16, bf16 or fp32).

    `config` overrides the tile sizes (BLOCK_M, BLOCK_N, BLOCK_K: powers of two, at least 16;
    GROUP_M) and launch settings; `kernel` is the kernel to launch (`wrap_triton(matmul_kernel)`
    inside a torch custom op).
    """
    check_launchable(kernel, a, b)
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not multiply")
    if a.dtype != b.dtype or a.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"matmul: dtypes {a.dtype} and {b.dtype}; want one of fp16, bf16, fp32")
    M, K = a.shape
    N = b.shape[1]
    # The kernel's offsets (row * stride + column) are 32-bit: keep every element within reach.
    if max(M * K, K * N, M * N) >= 2**31:
        raise ValueError(f"matmul: {M}x{K} @ {K}x{N} has 2**31 elements or more in a matrix")
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    cfg = {**_config(a), **(config or {})}
    # fp32 inputs: full fp32 products ("ieee"), as torch's own fp32 matmul by default
    # (torch.backends.cuda.matmul.allow_tf32 is False); Triton would use TF32 otherwise.
    # fp16 and bf16 products are exact in fp32 on the tensor cores: the setting changes nothing.
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]),)
    if M > 0 and N > 0:  # (also: % M and % N in the kernel need M, N > 0)
        kernel[grid](
            a, b, c, M, N, K,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            INPUT_PRECISION=precision, **cfg,
        )  # fmt: skip
    return c


def reference_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`a @ b` in plain PyTorch (fp16/bf16 products are summed in fp32, as in the kernel)."""
    return a @ b
