"""Where the time goes: every timed kernel ranked by time per step, with its module, source line,
share of the step, and achieved bandwidth and FLOP/s against the device's measured peaks."""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..capture import Capture
from ..compile import Compile
from ..graph import Node
from ..kernel import Kernel

if TYPE_CHECKING:
    # Measured times only (live captures): a log's report (issue 34) does not import them.
    from .timing import KernelTiming

# The columns of a row, in order (also the DataFrame's columns).
COLUMNS = (
    "rank",
    "compile_id",
    "role",
    "kernel",
    "language",
    "per_call_s",
    "calls",
    "per_step_s",
    "share",
    "module",
    "line",
    "code",
    "bytes",
    "bytes_per_s",
    "of_peak_bandwidth",
    "flops",
    "flops_per_s",
    "of_peak_flops",
)


def step_total_s(capture: Capture) -> float:
    """One step: the user's own step as it ran, where real steps were timed (the whole step,
    kernels wrapped: what their shares are of); else every timed graph's compiled forward plus
    its compiled backward, once each."""
    t = capture.timings
    if t is None:
        return 0.0
    if t.real_steps is not None and t.real_steps.split_wall is not None:
        return t.real_steps.split_wall.median_s
    return sum(g.step_s() or 0.0 for g in t.graphs)


def timed_kernels(capture: Capture) -> tuple[KernelTiming, ...]:
    """The kernels as timed in the user's real steps where they were, else re-run alone."""
    t = capture.timings
    if t is None:
        return ()
    return t.real_steps.kernels if t.real_steps is not None and t.real_steps.kernels else t.kernels


def kernel_rows(capture: Capture) -> list[dict[str, Any]]:
    """One dict per timed kernel (forward and backward), slowest per step first; see COLUMNS.

    `share` is the kernel's time per step over the step's time (all compiled graphs, forward
    plus backward); bandwidth and FLOP/s are per call, from the bytes of the tensors a call was
    passed (Inductor's own estimate where it wrote one) and the FLOPs its shapes imply.
    """
    t = capture.timings
    if t is None:
        return []
    from .timing import achieved_rates  # see the imports at the top

    compiles = {str(c.id): c for c in capture}
    total = step_total_s(capture)
    rows: list[dict[str, Any]] = []
    for kt in timed_kernels(capture):
        c = compiles.get(kt.compile_id)
        kernel = _kernel(c, kt) if c else None
        per_step = kt.per_run_s
        per_call = kt.time.median_s
        rates = achieved_rates(kt, t, kernel.bytes_moved if kernel else None)
        nbytes, bandwidth, flops = rates.bytes, rates.bytes_per_s, rates.flops_per_s
        nodes = _op_nodes(c, kernel) if c and kernel else []
        line, code = _line(nodes, kernel, capture) if kernel else ("", "")
        rows.append(
            {
                "compile_id": kt.compile_id,
                "role": kt.role,
                "kernel": kt.kernel,
                "language": kernel.language if kernel else "",
                "per_call_s": per_call,
                "calls": kt.calls_per_run,
                "per_step_s": per_step,
                "share": per_step / total if total > 0 else None,
                "module": _module(nodes),
                "line": line,
                "code": code,
                "bytes": nbytes,
                "bytes_per_s": bandwidth,
                "of_peak_bandwidth": bandwidth / t.peak_bytes_per_s
                if bandwidth and t.peak_bytes_per_s
                else None,
                "flops": kt.flops_per_call,
                "flops_per_s": flops,
                "of_peak_flops": flops / t.peak_flops if flops and t.peak_flops else None,
            }
        )
    rows.sort(key=lambda r: r["per_step_s"], reverse=True)
    return [{"rank": i + 1, **row} for i, row in enumerate(rows)]


def kernel_table(capture: Capture) -> Any:  # a pandas DataFrame, or the rows without pandas
    """`kernel_rows` as a pandas DataFrame when pandas is installed, else the list of dicts."""
    rows = kernel_rows(capture)
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows, columns=list(COLUMNS))


def _kernel(c: Compile, kt: KernelTiming) -> Kernel | None:
    for code in c.output_code:
        if (code.role or "forward") != kt.role:
            continue
        for k in code.kernels:
            if k.name == kt.kernel:
                return k
    return None


def _op_nodes(c: Compile, kernel: Kernel) -> list[Node]:
    """The post-grad nodes a kernel runs, in graph order: for an extern kernel the calls of its
    op only (its provenance also names the views around them), for a fused kernel all."""
    posts = c.graphs.get("inductor_post_grad_graph", ())
    index = next((i for i, code in enumerate(c.output_code) if kernel in code.kernels), None)
    if index is None or len(posts) != len(c.output_code):
        return []  # post-grad graphs not paired one to one with output modules: do not guess
    names = set(kernel.fused_nodes or kernel.origin_nodes)
    nodes = [n for n in posts[index].nodes if n.name in names and n.op == "call_function"]
    op = _op_name(kernel.name)
    own = [n for n in nodes if op and re.search(rf"(^|\.)aten\.{re.escape(op)}(\.|$)", n.target)]
    return own or nodes


def _op_name(kernel: str) -> str:
    """`extern_kernels.mm` -> mm, `torch.ops.aten._scaled_dot_product_flash_attention.default`
    -> _scaled_dot_product_flash_attention; a Triton or C++ kernel has none."""
    parts = kernel.split(".")
    if parts[0] == "extern_kernels" and len(parts) == 2:
        return parts[1]
    if "aten" in parts[:-1]:
        rest = parts[parts.index("aten") + 1 :]
        return rest[0] if rest else ""
    return ""


def _module(nodes: list[Node]) -> str:
    """The module the kernel's nodes came from; several (one name runs every matmul of a model):
    what their paths share, and how many."""
    paths = list(dict.fromkeys(n.module_path for n in nodes if n.module_path))
    if len(paths) <= 1:
        return paths[0] if paths else ""
    common = os.path.commonprefix([p.split(".") for p in paths])
    head = ".".join(common)
    return f"{head}.* ({len(paths)} modules)" if head else f"{len(paths)} modules"


def _line(nodes: list[Node], kernel: Kernel, capture: Capture) -> tuple[str, str]:
    """Where the kernel came from, as a person finds it: a notebook cell's line or file:line.
    The line most of its nodes were made by, and how many other lines made the rest."""
    sources = Counter(n.source for n in nodes if n.source)
    if sources:
        loc, others = sources.most_common(1)[0][0], len(sources) - 1
    elif kernel.source_lines:  # no post-grad nodes to go by: the last frame provenance gave
        loc, others = kernel.source_lines[-1], 0
    else:
        return "", ""
    where = loc.label(capture.cells)
    if others:
        where += f" (+{others} more line{'s' if others > 1 else ''})"
    return where, loc.code.strip()
