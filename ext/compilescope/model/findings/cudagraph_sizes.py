"""Input sizes that change under CUDA graphs (mode="reduce-overhead"): each distinct size records a graph of its own, so padding to fixed sizes comes before marking them dynamic."""

from __future__ import annotations

import re
from dataclasses import replace

from ..capture import Capture
from ..compile import Compile
from .catalog import remedy
from .parts import Finding

_CUDAGRAPHS_ON = re.compile(r'"triton\.cudagraphs":\s*true')


def padded_sizes_first(found: list[Finding], capture: Capture) -> list[Finding]:
    """Size recompiles of compiles that run as CUDA graphs get "pad to fixed sizes" first: a
    dynamic size still records one CUDA graph per distinct size (torch warns past
    `triton.cudagraph_dynamic_shape_warn_limit`), and a size seen once is recorded, never
    replayed (pytorch/pytorch#188150: a batch padded to its longest sequence, 48x slower)."""
    # (On a CPU, mode="reduce-overhead" sets the flag too, and Inductor skips CUDA graphs.)
    graphed = {
        str(c.id)
        for c in capture
        if _cudagraphs(c) and any(k.language == "triton" for k in c.kernels)
    }
    if not graphed:
        return found
    out = []
    for f in found:
        if f.kind == "recompile" and " changes" in f.what and set(f.compile_ids) & graphed:
            f = replace(
                f,
                what=f'{f.what} These compiles run as CUDA graphs (mode="reduce-overhead"): '
                "each distinct size records a graph of its own, dynamic or not.",
                fixes=(remedy("fixed_sizes").fix(f.user), *f.fixes),
            )
        out.append(f)
    return out


def _cudagraphs(c: Compile) -> bool:
    """Whether the compile ran with CUDA graphs on: as a live capture heard it while Inductor
    compiled (`cudagraphs`), else its logged Inductor config (where a global setting is; looked
    up in the text: the config is hundreds of keys, and findings run for every view)."""
    if c.metrics.get("cudagraphs") is True:
        return True
    raw = c.metrics.get("inductor_config")
    return isinstance(raw, str) and _CUDAGRAPHS_ON.search(raw) is not None
