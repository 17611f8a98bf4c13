"""Which compiles Inductor made with CUDA graphs on: read while it compiles, kept in each compile's metrics."""

from __future__ import annotations

from dataclasses import replace

import torch

from ...model.capture import Capture

# The compile's metric compilescope adds (torch's own `inductor_config` metric is logged after
# Inductor's config patch for mode="reduce-overhead" is undone: it reads False).
METRIC = "cudagraphs"


def cudagraphs_on() -> bool:
    """Whether Inductor compiles with CUDA graphs right now: torch.compile's
    mode="reduce-overhead" patches `torch._inductor.config.triton.cudagraphs` while it compiles
    (torch/_inductor/compile_fx.py), not where the user could read it."""
    try:
        return bool(torch._inductor.config.triton.cudagraphs)
    except AttributeError:  # guard against config drift: unknown reads as off
        return False


def with_cudagraphs(capture: Capture, graphed: set[str]) -> Capture:
    """The capture with METRIC set on the compiles Inductor made with CUDA graphs on."""
    if not graphed:
        return capture
    compiles = tuple(
        replace(c, metrics={**c.metrics, METRIC: True}) if str(c.id) in graphed else c
        for c in capture.compiles
    )
    return replace(capture, compiles=compiles)
