"""The device's measured peaks (a large copy's bandwidth, a large matmul's FLOP/s), once per process."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import torch


def _best_of(fn: Callable[[], object], device: str, repeats: int) -> float:
    fn()  # warm-up: allocation, library handles
    best = float("inf")
    for _ in range(repeats):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


@functools.cache
def device_peaks(device: str, dtype: torch.dtype = torch.float32) -> tuple[float, float, str]:
    """(bytes/s of a copy, counting read and write; FLOP/s of a square matmul in `dtype`; how).

    Sizes are large enough to leave caches and launch costs behind, small enough to cost little
    against a compile: 32 MiB / 768^2 on a CPU (about 0.1 s on 2 cores), 512 MiB / 8192^2 on a
    GPU (milliseconds). Cached per process.
    """
    gpu = device.startswith("cuda")
    numel = (512 if gpu else 32) * (1 << 20) // 4
    src = torch.empty(numel, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    copy_s = _best_of(lambda: dst.copy_(src), device, 5 if gpu else 2)
    bandwidth = 2 * src.numel() * src.element_size() / copy_s
    n = 8192 if gpu else 768
    if not gpu and dtype not in (torch.float32, torch.float64):
        dtype = torch.float32  # CPU matmul in half types is not what a CPU is built for
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    mm_s = _best_of(lambda: a @ b, device, 5 if gpu else 2)
    flops = 2.0 * n**3 / mm_s
    how = (
        f"copy of {numel * 4 >> 20} MiB (read + write), best of runs; "
        f"{n}x{n} matmul in {str(dtype).removeprefix('torch.')}"
    )
    return bandwidth, flops, how
