"""Speed findings from the user's real steps: where the step's time goes, and what makes it faster.

Each finding is detected from what was measured in the real steps (`Timings.real_steps`), never
guessed from the code alone, and carries its cost as time per step and share of the step. A
cause below `SHOWN_SHARE` of the step is not a finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from ..measured.kernel_table import kernel_rows
from ..measured.step_budget import device_scale
from .budget import budget_findings, uncompiled_graphs
from .catalog import remedy
from .parts import Cost, Finding, Fix, Setting
from .perf import LIBRARY_MATMULS, SHOWN_SHARE, op_of
from .places import optimizer_place
from .verdict import VERDICTS, verdict_findings

if TYPE_CHECKING:
    # Measured times only (live captures): a log's report (issue 34) does not import them.
    from ..measured.timing import RealSteps

# Optimizers with a fused implementation (torch/optim: `_fused_*`; CUDA, and CPU since torch
# 2.4 for Adam, AdamW, SGD and Adagrad).
_FUSED = {"Adam", "AdamW", "SGD", "Adagrad"}
# The idle share above which a GPU step is launch- or host-bound: the device waits for the CPU
# most of the step (issue 31's CNN: 75% between kernels).
_IDLE_SHARE = 0.30
# Launch-bound steps measured 20-60 us of device idle time per compiled launch (the blind
# set's loops, H100 and H200): a step idle for more than this per launch, compiled and eager,
# is busy on the host with other work (data preparation, Python, the CUDA runtime). The
# second blind round's inline data loading: 3.2 ms per launch.
_HOST_BOUND_PER_LAUNCH_S = 200e-6


def speed_findings(capture: Capture) -> list[Finding]:
    """The speed findings of a capture with real steps (none without them)."""
    real = capture.timings.real_steps if capture.timings else None
    note = capture.timings.real_steps_note if capture.timings is not None else ""
    # (A block that ran no optimizer step is no training loop: nothing to say first.)
    if real is None and note and not note.startswith("no optimizer.step() ran"):
        # The steps were followed and none could be timed: said first, with how many steps
        # a window needs, so no list of findings reads as a speed verdict it never made.
        return [
            Finding(
                kind="steps_not_timed",
                what=f"Your steps were not timed, so speed is not judged: {note}.",
                key="steps_not_timed",
            )
        ]
    if real is None or real.compiled.median_s <= 0:
        return []
    verdicts = verdict_findings(real)
    if (
        not real.graphs
        and not real.kernels
        and not any(c.kernels for c in capture)
        and not uncompiled_graphs(capture)
    ):
        # No compiled kernel ran in the steps: "not faster" would be eager against eager; the
        # budget's not_compiled finding says what happened. Not so where a debugging backend
        # ran Dynamo's graphs (its guards and frames are a cost of their own: the blind
        # verdict set's backend="eager" loop is one).
        verdicts = [f for f in verdicts if f.kind != "compiled_not_faster"]
    found = [
        *verdicts,
        *_optimizer_findings(capture, real),
        *_launch_bound_findings(capture, real),
        *_tf32_findings(capture, real),
        *_sync_findings(real),
        *_allocator_findings(real),
        *_channels_last_findings(capture, real),
        *budget_findings(capture, real),
    ]
    return [f for f in found if (f.cost.share or 0.0) >= SHOWN_SHARE or f.kind in VERDICTS]


def _optimizer_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    # A fused optimizer is no finding: its step is already one pass over all parameters, and
    # the one change left was measured not to help (speed zoo, GPT-2 and ResNet-18 on an
    # H200): `torch.compile(opt.step)` of a fused optimizer falls back to eager (torch breaks
    # the graph in its fused path), 1.03x and 0.88x by the stopwatch; a foreach AdamW with its
    # step compiled ran 0.84x the speed of the fused one. Its time stays in the step's split.
    eager = [o for o in real.optimizers if o.eager and not o.fused]
    if not eager or real.optimizer_s is None:
        return []
    wall = real.compiled.median_s
    share = real.optimizer_s / wall
    o = max(eager, key=lambda o: o.params)
    where = optimizer_place(o, capture.cells)
    flags = f"foreach={o.foreach}, fused={o.fused}"
    default = " (torch's default: foreach on CUDA)" if o.foreach is None and not o.fused else ""
    what = (
        f"The optimizer `{o.name}` runs eagerly, outside the compiled graphs: "
        f"{real.optimizer_s * 1e3:.3f} ms per step ({share:.0%} of the step), over "
        f"{o.params} parameter tensors, {flags}{default}."
    )
    # The real steps time the eager optimizer steps of a step together, fused ones included.
    timed = sum(1 for x in real.optimizers if x.eager)
    if timed > 1:
        what += f" That time is all {timed} optimizers that stepped eagerly, together."
    fixes = []
    if o.name in _FUSED and not o.fused:
        fixes.append(
            Fix(
                "code",
                "a fused optimizer",
                change=f"build it with `fused=True`: torch.optim.{o.name}(..., fused=True)",
                where=where,
                tradeoff="one kernel per step for all parameters; all parameters on one device "
                "type (CUDA, or CPU since torch 2.4) and floating point",
                source="torch.optim docs (fused implementations)",
            )
        )
    # torch's default (foreach=None) is the foreach step already where the parameters are on
    # CUDA: building it with foreach=True there would change nothing (a GPT-2 loop on an H100).
    default_foreach = o.foreach is None and real.device.startswith("cuda")
    if not o.foreach and not o.fused and not default_foreach:
        fixes.append(
            Fix(
                "code",
                "a foreach optimizer",
                change=f"build it with `foreach=True`: torch.optim.{o.name}(..., foreach=True)",
                where=where,
                tradeoff="groups the per-parameter ops into a few multi-tensor kernels; holds "
                "intermediates for all parameters at once (more peak memory)",
                source="torch.optim docs (foreach implementations)",
            )
        )
    fixes.append(
        Fix(
            "code",
            "compile the optimizer step",
            change="compile the step: `opt_step = torch.compile(opt.step)` and call "
            "`opt_step()` instead of `opt.step()` (or compile the whole training step)",
            where=where,
            tradeoff="one more compile (seconds to a minute); a learning-rate scheduler "
            "should keep the rate in a tensor (`lr=torch.tensor(...)`): a float rate with a "
            "warm-up recompiled the step at every rate, then ran it eagerly (torch 2.11, H200); "
            "where `fused=True` exists, prefer it: a compiled foreach AdamW step measured 0.84x "
            "the speed of a fused eager one (a GPT-2 step on an H200)",
            source="PyTorch tutorial: compiling the optimizer",
        )
    )
    return [
        Finding(
            kind="eager_optimizer",
            what=what,
            key=f"eager_optimizer:{o.name}",
            user=where,
            cost=Cost(
                step_s=real.optimizer_s,
                share=share,
                note="wall time per step inside the optimizer's step, measured in the real steps",
            ),
            fixes=tuple(fixes),
        )
    ]


def _launch_bound_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    if real.busy_s is None or not real.device.startswith("cuda"):
        return []  # only a GPU profile tells device time from waiting
    wall = real.compiled.median_s
    idle = max(wall - real.busy_s, 0.0)
    # Time inside an eager optimizer, and idle time around the CPU's waits, are findings of
    # their own: count only the rest here.
    idle_rest = max(
        idle - (real.optimizer_s or 0.0) - (real.sync_idle_s or 0.0) - (real.allocator_s or 0.0),
        0.0,
    )
    share = idle_rest / wall
    if share < _IDLE_SHARE:
        return []
    calls = sum(k.calls_per_run for k in real.kernels)
    kernel_s = sum(k.time.median_s * k.calls_per_run for k in real.kernels)
    graphs = len({(g.compile_id, g.role) for g in real.graphs})
    # Kernels seen only by name in the profile ran inside CUDA graphs: they are on already.
    replayed = any(k.source.endswith("(CUDA graph replay)") for k in real.kernels)
    if replayed:
        calls = 0
    # No compiled kernel timed: replayed in CUDA graphs (names shared by several kernels are
    # not told apart), or not run at all where a frame failed (past the recompile limit).
    ran_eagerly = any(c.failure for c in capture) or not any(c.kernels for c in capture)
    eager = [w for w in real.outside if w.kind == "eager_op"]
    eager_calls = sum(w.calls for w in eager)
    if calls and idle_rest > (calls + eager_calls) * _HOST_BOUND_PER_LAUNCH_S:
        return [_host_bound(real, idle, idle_rest, calls + eager_calls)]
    if not calls and not replayed and ran_eagerly:
        launches = (
            "no compiled kernel ran in the timed steps: the code ran eagerly (see the findings "
            "on recompiles and uncompiled frames)"
        )
    elif calls:
        launches = (
            f"{calls:.0f} compiled kernel launches per step in {graphs} graph"
            f"{'' if graphs == 1 else 's'}, {kernel_s / calls * 1e6:.1f} us each on average"
        )
    else:
        # Kernels replayed inside CUDA graphs run no Python wrapper of ours.
        launches = (
            "its compiled kernels already run as CUDA graphs: what is left is Python, the "
            "eager code and the optimizer between them"
        )
    what = (
        f"The GPU is idle {idle * 1e3:.3f} ms of the {wall * 1e3:.3f} ms step "
        f"({idle / wall:.0%}): the step is bound by kernel launches and Python between them "
        f"({launches})."
    )
    placed = [w for w in eager if w.where]
    if eager_calls > calls and placed:
        # Most launches are eager ops: where they run is what to batch or compile (the second
        # blind round's per-sample loss loop: a Python loop over the batch).
        top = max(placed, key=lambda w: w.calls)
        same = sum(w.calls for w in placed if w.where == top.where)
        what += (
            f" {eager_calls:.0f} {'more ' if calls else ''}launches a step are eager ops, "
            f"{same:.0f} of them in `{top.where}`: batch that code or compile it."
        )
    cudagraphs = Setting("mode", "compile_kwarg", "reduce-overhead")
    bigger = Fix(
        "code",
        "fewer, bigger launches",
        change="fewer graphs (remove graph breaks; compile the whole step, the optimizer "
        "included) and a bigger batch per step, so each launch does more work",
        tradeoff="a bigger batch changes the optimisation (learning rate); needs memory",
        source="PyTorch performance tuning guide",
    )
    fixes: tuple[Fix, ...] = (bigger,)
    if calls:
        fixes = (
            Fix(
                "setting",
                "CUDA graphs",
                (cudagraphs,),
                tradeoff="replays each graph's kernels with one launch; keeps static copies "
                "of inputs and outputs (more memory); does not apply to graphs with dynamic "
                "shapes, CPU tensors or mutated inputs (torch says which, and runs those "
                "without)",
                source="torch.compile docs (mode='reduce-overhead')",
            ),
            bigger,
        )
    syncs = real.syncs_per_step or 0.0
    if syncs >= 1:
        # A host that waits for the device cannot queue the next kernels ahead of it: after
        # each sync the device runs each kernel as it is launched, idle in between. Remove the
        # syncs first (CUDA graphs cannot capture them either). The blind set's `.item()` loop
        # ranked its sync finding #4 behind this one, with CUDA graphs as this one's fix.
        what += (
            f" {syncs:g} host sync{'s' if syncs != 1 else ''} per step (`.item()`, `.cpu()`, "
            "printing a tensor) keep the CPU from queueing kernels ahead of the GPU: remove "
            "them first."
        )
        fixes = (remedy("avoid_syncs").fix(), *fixes)
    return [
        Finding(
            kind="launch_bound",
            what=what,
            key="launch_bound",
            compile_ids=tuple(dict.fromkeys(g.compile_id for g in real.graphs)),
            cost=Cost(
                step_s=idle_rest,
                share=share,
                note="wall time per step the GPU ran no kernel (outside the optimizer)",
            ),
            fixes=fixes,
        )
    ]


def _host_bound(real: RealSteps, idle: float, idle_rest: float, launches: float) -> Finding:
    wall = real.compiled.median_s
    what = (
        f"The GPU is idle {idle * 1e3:.3f} ms of the {wall * 1e3:.3f} ms step ({idle / wall:.0%}), "
        f"far longer than its {launches:.0f} kernel launches a step take (launch-bound steps "
        "measured 20-60 us of idle time a launch): the CPU is busy with other work between "
        "kernels, not launching them: code of the step that runs on the CPU (loading and "
        "preparing data, Python loops, calls into the CUDA runtime)."
    )
    return Finding(
        kind="host_bound",
        what=what,
        key="host_bound",
        compile_ids=tuple(dict.fromkeys(g.compile_id for g in real.graphs)),
        cost=Cost(
            step_s=idle_rest,
            share=idle_rest / wall,
            note="wall time per step the GPU ran no kernel (outside the optimizer and syncs)",
        ),
        fixes=(remedy("host_work_off_the_step").fix(),),
    )


def _allocator_findings(real: RealSteps) -> list[Finding]:
    """Device memory given back to the driver and asked for again inside the steps: calls to
    CUDA's allocator, which torch's caching allocator avoids once the first steps have run."""
    took, calls = real.allocator_s, real.allocator_calls_per_step
    wall = real.compiled.median_s
    if not took or not calls or took / wall < SHOWN_SHARE:
        return []
    what = (
        f"The step spends {took * 1e3:.3f} ms ({took / wall:.0%}) in {calls:.0f} calls a step to "
        "CUDA's allocator (cudaMalloc, cudaFree): device memory is given back to the driver and "
        "asked for again every step, where torch's caching allocator would reuse it. "
        "`torch.cuda.empty_cache()` in the loop does this (and cudaFree waits for the GPU)."
    )
    return [
        Finding(
            kind="cuda_malloc",
            what=what,
            key="cuda_malloc",
            cost=Cost(
                step_s=took,
                share=took / wall,
                note="CPU time per step in cudaMalloc and cudaFree (profiled steps)",
            ),
            fixes=(remedy("keep_cached_memory").fix(),),
        )
    ]


def _tf32_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    s = real.settings
    if s is None or not s.tf32_capable or s.matmul_precision != "highest":
        return []
    step_s = 0.0
    ids: list[str] = []
    for row in kernel_rows(capture):
        op, _aten = op_of(row["kernel"])
        if op in LIBRARY_MATMULS and _is_fp32(capture, row["compile_id"], op):
            step_s += row["per_step_s"] or 0.0
            ids.append(row["compile_id"])
    if not ids:
        return []
    step_s *= device_scale(real)  # as the budget's parts: never more than the step
    share = step_s / real.compiled.median_s
    setting = Setting("torch.backends.cuda.matmul.allow_tf32", "set", True)
    what = (
        f"Matmuls run in full fp32 on a GPU with TF32 tensor cores ({s.device_name}): "
        f"{step_s * 1e3:.3f} ms per step ({share:.0%} of the step); "
        "torch.get_float32_matmul_precision() is 'highest'."
    )
    return [
        Finding(
            kind="fp32_matmul",
            what=what,
            key="fp32_matmul",
            compile_ids=tuple(dict.fromkeys(ids)),
            cost=Cost(step_s=step_s, share=share, note="fp32 library matmuls' time per step"),
            fixes=(
                Fix(
                    "setting",
                    'torch.set_float32_matmul_precision("high")',
                    (setting,),
                    tradeoff="less precision: TF32 keeps fp32's range with a 10-bit mantissa (3 decimal "
                    "digits) in matmul inputs: check the loss curve; bf16 autocast goes further",
                    source="torch.set_float32_matmul_precision docs",
                ),
            ),
        )
    ]


def _sync_findings(real: RealSteps) -> list[Finding]:
    if not real.syncs_per_step or real.sync_idle_s is None:
        return []
    wall = real.compiled.median_s
    reads = real.scalar_reads_per_step or 0.0
    read_text = (
        f", {reads:.0f} of them reading a tensor into a Python number (`.item()`, "
        "`.tolist()`, `float(t)`, printing a tensor)"
        if reads
        else ""
    )
    what = (
        f"The CPU waits for the GPU {real.syncs_per_step:.0f} time"
        f"{'' if round(real.syncs_per_step) == 1 else 's'} per step{read_text}: each wait "
        f"drains the GPU's queue, idle {real.sync_idle_s * 1e3:.3f} ms per step "
        f"({real.sync_idle_s / wall:.0%}) until the next kernel is launched."
    )
    if reads and real.read_places:
        # Where the reads are, by the user's function: what to change (a `.item()` in the
        # loop, or an `if` on a tensor's value in a model, which also breaks its graph).
        shown = real.read_places[:3]
        what += " The reads are in " + ", ".join(
            f"`{p.where}` ({p.per_step:.0f} a step)" for p in shown
        )
        rest = len(real.read_places) - len(shown)
        what += f" and {rest} more function{'s' if rest > 1 else ''}." if rest else "."
    return [
        Finding(
            kind="host_sync",
            what=what,
            key="host_sync",
            cost=Cost(
                step_s=real.sync_idle_s,
                share=real.sync_idle_s / wall,
                note="device idle time per step around the CPU's waits (profiled steps)",
            ),
            fixes=(
                Fix(
                    "code",
                    "read values less often",
                    change="keep values on the GPU inside the step: read the loss every N "
                    "steps (`if step % 50 == 0: print(loss.item())`), accumulate metrics in a "
                    "tensor, avoid data-dependent shapes (`nonzero`, boolean masks) in the loop",
                    tradeoff="the log shows every Nth value, a step late",
                    source="PyTorch performance tuning guide (avoid CPU-GPU synchronization)",
                ),
            ),
        )
    ]


def _channels_last_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    if not real.device.startswith("cuda"):
        return []
    step_s = 0.0
    ids: list[str] = []
    for row in kernel_rows(capture):
        op, _aten = op_of(row["kernel"])
        if op.startswith("convolution") and _nchw(capture, row["compile_id"]):
            step_s += row["per_step_s"] or 0.0
            ids.append(row["compile_id"])
    if not ids:
        return []
    step_s *= device_scale(real)
    share = step_s / real.compiled.median_s
    what = (
        f"Convolutions run on NCHW (channels-first) tensors: {step_s * 1e3:.3f} ms per step "
        f"({share:.0%} of the step). cuDNN's tensor-core kernels often run faster "
        "channels-last, but not always: on a bf16 ResNet-style CNN on an H100 it measured only "
        "1.03x (benchmarks/RESULTS.md), so measure before keeping it."
    )
    return [
        Finding(
            kind="channels_last",
            what=what,
            key="channels_last",
            compile_ids=tuple(dict.fromkeys(ids)),
            cost=Cost(step_s=step_s, share=share, note="convolutions' time per step"),
            fixes=(
                Fix(
                    "code",
                    "channels-last memory format",
                    change="model = model.to(memory_format=torch.channels_last) and each batch "
                    "x = x.to(memory_format=torch.channels_last), before compiling",
                    tradeoff="layout conversions where a layer needs NCHW; the gain is largest "
                    "with bf16/fp16 on tensor cores",
                    source="PyTorch channels-last tutorial; performance tuning guide",
                ),
            ),
        )
    ]


def _nchw(capture: Capture, compile_id: str) -> bool:
    """Whether the compile's forward convolutions read 4-d inputs laid out channels-first."""
    try:
        c = capture[compile_id]
    except (KeyError, IndexError, ValueError):
        return False
    for g in c.graphs.get("inductor_post_grad_graph", ()):
        nodes = {n.name: n for n in g.nodes}
        for n in g.nodes:
            if "aten.convolution." not in n.target or not n.inputs:
                continue
            source = nodes.get(n.inputs[0])
            t = source.tensors[0] if source is not None and source.tensors else None
            if t is not None and len(t.stride) == 4:
                if all(x.isdigit() for x in t.stride):  # symbolic strides: not known
                    strides = [int(x) for x in t.stride]
                    return strides == sorted(strides, reverse=True) and strides[1] != 1
    return False


def _is_fp32(capture: Capture, compile_id: str, op: str) -> bool:
    """Whether the compile's matmuls of this op work on fp32 tensors (post-grad nodes)."""
    try:
        c = capture[compile_id]
    except (KeyError, IndexError, ValueError):
        return False
    target = f"aten.{op}."
    for g in c.graphs.get("inductor_post_grad_graph", ()):
        dtypes = [t.dtype for n in g.nodes if target in n.target for t in n.tensors]
        if dtypes:
            return all(d == "f32" for d in dtypes)
    return False


__all__ = ["SHOWN_SHARE", "speed_findings"]
