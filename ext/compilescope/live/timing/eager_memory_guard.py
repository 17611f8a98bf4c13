"""Whether the eager steps fit: an eager step may need several times the compiled step's memory."""

from __future__ import annotations

import torch

from ...common import human_bytes

# How many times the compiled step's own memory an eager step may need: eager keeps the
# intermediates that fusion removed. Issue 24 saw 3.0x (a step peaking 1.33 GiB compiled,
# 4.01 GiB eager, on an H100); an eager step that runs out of memory would raise in the user's
# own loop, so the eager window runs only where this much is free.
EAGER_MEMORY_FACTOR = 3.0


def eager_memory_verdict(
    between_steps: int, peak: int, available: int, factor: float = EAGER_MEMORY_FACTOR
) -> str | None:
    """Why the eager steps should not run, or None when they may.

    `between_steps`: bytes allocated at a step boundary (weights, gradients, optimizer state);
    `peak`: the most allocated so far; `available`: what the device and the allocator's cache
    still hold free. The compiled step needed at most `peak - between_steps` on top.
    """
    step = max(peak - between_steps, 0)
    need = factor * step
    if need <= available:
        return None
    return (
        f"eager steps skipped: the compiled step needs up to {human_bytes(step)} above the "
        f"{human_bytes(between_steps)} held between steps, an eager one may need "
        f"{factor:g}x that ({human_bytes(need)}), and {human_bytes(available)} are free"
    )


def cuda_memory_reading() -> tuple[int, int, int]:
    """(allocated now, at a step boundary; the peak so far; free on the device and in the
    allocator's cache): `eager_memory_verdict`'s arguments, read on the current CUDA device."""
    free, _total = torch.cuda.mem_get_info()
    allocated = torch.cuda.memory_allocated()
    cached = torch.cuda.memory_reserved() - allocated
    return allocated, torch.cuda.max_memory_allocated(), free + cached
