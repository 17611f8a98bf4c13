"""Where the time goes: every timed kernel ranked by time per step, with its module, source line,
share of the step, and achieved bandwidth and FLOP/s against the device's measured peaks."""

from __future__ import annotations

from collections import Counter

from .capture import Capture
from .compile import Compile, short_path
from .kernel import Kernel
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
    """One step: every timed graph's compiled forward plus its compiled backward, once each."""
    t = capture.timings
    if t is None:
        return 0.0
    return sum(g.step_s() or 0.0 for g in t.graphs)


def kernel_rows(capture: Capture) -> list[dict]:
    """One dict per timed kernel (forward and backward), slowest per step first; see COLUMNS.

    `share` is the kernel's time per step over the step's time (all compiled graphs, forward
    plus backward); bandwidth and FLOP/s are per call, from the bytes of the tensors a call was
    passed (Inductor's own estimate where it wrote one) and the FLOPs its shapes imply.
    """
    t = capture.timings
    if t is None:
        return []
    compiles = {str(c.id): c for c in capture}
    total = step_total_s(capture)
    rows = []
    for kt in t.kernels:
        c = compiles.get(kt.compile_id)
        kernel = _kernel(c, kt) if c else None
        per_step = kt.per_run_s
        nbytes = kernel.bytes_moved if kernel and kernel.bytes_moved else kt.bytes_per_call
        per_call = kt.time.median_s
        bandwidth = nbytes / per_call if nbytes and per_call > 0 else None
        flops = kt.flops_per_call / per_call if kt.flops_per_call and per_call > 0 else None
        # Sizes taken from whole argument tensors are an upper bound (a kernel may read a slice
        # of one): a rate above the device's measured peak says so, and is not shown as a rate.
        if bandwidth and t.peak_bytes_per_s and bandwidth > t.peak_bytes_per_s:
            bandwidth = None
        if flops and t.peak_flops and flops > t.peak_flops:
            flops = None
        line, code = _line(kernel, capture) if kernel else ("", "")
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
                "module": _module(c, kt, kernel) if c and kernel else "",
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


def kernel_table(capture: Capture):
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


def _module(c: Compile, kt: KernelTiming, kernel: Kernel) -> str:
    """The module path most of the kernel's fused post-grad nodes came from."""
    posts = c.graphs.get("inductor_post_grad_graph", ())
    index = next(
        (i for i, code in enumerate(c.output_code) if kernel in code.kernels),
        None,
    )
    if index is None or len(posts) != len(c.output_code):
        return ""  # post-grad graphs not paired one to one with output modules: do not guess
    names = set(kernel.fused_nodes or kernel.origin_nodes)
    paths = Counter(n.module_path for n in posts[index].nodes if n.name in names and n.module_path)
    return paths.most_common(1)[0][0] if paths else ""


def _line(kernel: Kernel, capture: Capture) -> tuple[str, str]:
    """Where the kernel came from, as a person finds it: a notebook cell's line or file:line."""
    if not kernel.source_lines:
        return "", ""
    loc = kernel.source_lines[-1]  # the innermost frame: the line that made the op
    cell = capture.cells.get(loc.file)
    where = (
        f"cell [{cell}] line {loc.line}"
        if cell is not None
        else f"{short_path(loc.file)}:{loc.line}"
    )
    return where, loc.code.strip()
