"""GPU idle time in the real steps, by its cause: launches, other host work, syncs, the allocator."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from .catalog import remedy
from .parts import Cost, Finding, Fix, Setting
from .perf import SHOWN_SHARE

if TYPE_CHECKING:
    from ..measured.timing import OutsideWork, RealSteps

# The idle share above which a GPU step is launch- or host-bound: the device waits for the CPU
# most of the step (issue 31's CNN: 75% between kernels).
IDLE_SHARE = 0.30
# Launch-bound steps measured 20-60 us of device idle time per compiled launch (the blind
# set's loops, H100 and H200): a step idle for more than this per launch, compiled and eager,
# is busy on the host with other work (data preparation, Python, the CUDA runtime). The
# second blind round's inline data loading: 3.2 ms per launch.
_HOST_BOUND_PER_LAUNCH_S = 200e-6
# A function whose ops take less of the step than this is not where the host's time goes.
_HOST_PLACE_SHARE = 0.05


def launch_bound_findings(capture: Capture, real: RealSteps) -> list[Finding]:
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
    if share < IDLE_SHARE:
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
    per_parameter: list[str] = []
    if eager_calls > calls and placed:
        # Most launches are eager ops: where they run is what to batch or compile (the second
        # blind round's per-sample loss loop: a Python loop over the batch).
        top = max(placed, key=lambda w: w.calls)
        same = sum(w.calls for w in placed if w.where == top.where)
        what += (
            f" {eager_calls:.0f} {'more ' if calls else ''}launches a step are eager ops, "
            f"{same:.0f} of them in `{top.where}`: vectorize that code (one op over a whole "
            "batch or list of tensors, not a Python loop of small ones) or compile it."
        )
        per_parameter = _per_parameter_ops(real, [w for w in placed if w.where == top.where])
        if per_parameter:
            what += (
                f" {', '.join(per_parameter)}: once per parameter tensor, a loop over the "
                "parameters or their gradients."
            )
        penalty = _weight_penalty(real, placed)
        if penalty:
            what += (
                f" {penalty}, with its backward: a penalty on the weights added to the loss "
                "(an L2 term), which the optimizer's `weight_decay` applies inside its update."
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
    if per_parameter:
        fixes = (remedy("foreach_over_parameters").fix(), *fixes)
    if placed and _weight_penalty(real, placed):
        fixes = (remedy("optimizer_weight_decay").fix(), *fixes)
    repeats = whole_model_calls(capture, real) if calls else 0
    if repeats >= 2:
        # Gradient accumulation over micro-batches (or several calls of the model a step): the
        # same launches run `repeats` times, each on a fraction of the batch (the fourth blind
        # round's Llama, 4 micro-batches of 4: 3.44x as one batch of 16).
        what += (
            f" The model's compiled graph, which holds every parameter the optimizer steps, "
            f"runs {repeats} times per optimizer step (gradient accumulation over micro-batches, "
            f"or several calls of the model): each of its launches works on a {repeats}th of "
            "the batch it could."
        )
        fixes = (remedy("bigger_micro_batch").fix(), *fixes)
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


# The share of the optimizer's parameter tensors a graph must take as inputs to be "the model".
_WHOLE_MODEL = 0.9


def whole_model_calls(capture: Capture, real: RealSteps) -> int:
    """How many times per optimizer step the graph of the whole model ran (0: none such): the
    forward graph that takes nearly every parameter the optimizers step, by its kernels' calls
    (each runs at least once a call). A block compiled on its own (regional compilation) holds
    a block's parameters and runs once per block: not it."""
    stepped = sum(o.params for o in real.optimizers)
    if not stepped:
        return 0
    calls: dict[str, float] = {}
    for k in real.kernels:
        if k.role == "forward" and k.calls_per_run > 0:
            calls[k.compile_id] = min(calls.get(k.compile_id, k.calls_per_run), k.calls_per_run)
    best = 0
    for cid, n in calls.items():
        try:
            c = capture[cid]
        except (KeyError, IndexError, ValueError):
            continue
        params = max(
            (
                sum(1 for n in g.nodes if n.op == "placeholder" and "_parameters_" in n.name)
                for g in c.graphs.get("dynamo_output_graph", ())
            ),
            default=0,
        )
        if params >= _WHOLE_MODEL * stepped:
            best = max(best, round(n))
    return best


# Below this many parameter tensors, an op's calls matching their count may be chance.
_PER_PARAMETER_LEAST = 16


def _per_parameter_ops(real: RealSteps, ops: list[OutsideWork]) -> list[str]:
    """The eager ops launched once (or k times) per parameter tensor a step, as
    "`aten::mul_` 290 a step": a Python loop over the parameters (the second blind round's
    hand-written gradient clipping: pow, sum, add and mul_ 290 times a step for 290)."""
    params = max((o.params for o in real.optimizers), default=0)
    if params < _PER_PARAMETER_LEAST:
        return []
    out = []
    for w in sorted(ops, key=lambda w: -w.calls):
        ratio = w.calls / params
        if round(ratio) >= 1 and abs(ratio - round(ratio)) < 0.05:
            out.append(f"`{w.name}` {w.calls:.0f} a step")
    if out:
        out[0] = f"{out[0]} for {params} parameter tensors"
    return out[:4]


# A norm of each parameter: the forward of a penalty on the weights.
_NORMS = ("aten::pow", "aten::square", "aten::norm", "aten::linalg_vector_norm", "aten::abs")


def _weight_penalty(real: RealSteps, ops: list[OutsideWork]) -> str:
    """ "`aten::pow` 200 a step for 200 parameter tensors" where an eager norm runs once per
    parameter tensor and `aten::mul` at least twice per parameter (its backward, `2 * p *
    grad`): a hand-written L2 penalty in the loss (the fifth blind round's ViT: 1.54x with
    the optimizer's weight_decay, H200). A gradient clip's norms have no backward."""
    params = max((o.params for o in real.optimizers), default=0)
    if params < _PER_PARAMETER_LEAST:
        return ""
    calls: dict[str, float] = {}
    for w in ops:
        calls[w.name] = calls.get(w.name, 0.0) + w.calls
    norm = next((n for n in _NORMS if round(calls.get(n, 0.0) / params) >= 1), "")
    if not norm or calls.get("aten::mul", 0.0) < 2 * params * 0.95:
        return ""
    return f"`{norm}` {calls[norm]:.0f} a step for {params} parameter tensors"


def _host_bound(real: RealSteps, idle: float, idle_rest: float, launches: float) -> Finding:
    wall = real.compiled.median_s
    what = (
        f"The GPU is idle {idle * 1e3:.3f} ms of the {wall * 1e3:.3f} ms step ({idle / wall:.0%}), "
        f"far longer than its {launches:.0f} kernel launches a step take (launch-bound steps "
        "measured 20-60 us of idle time a launch): the CPU is busy with other work between "
        "kernels, not launching them: code of the step that runs on the CPU (loading and "
        "preparing data, Python loops, calls into the CUDA runtime)."
    )
    # Where the host's time goes, by the user's function: what to move out of the step (the
    # second blind round's data loading: the dataset's __getitem__, run inline). Measured in
    # the profiled steps, slower than the clean ones: said as a share of those.
    profiled = real.split_wall.median_s if real.split_wall is not None else wall
    shown = [h for h in real.host_time if h.seconds >= _HOST_PLACE_SHARE * profiled][:3]
    fixes: tuple[Fix, ...] = (remedy("host_work_off_the_step").fix(),)
    if shown:
        what += (
            " Its ATen ops on the CPU take "
            + ", ".join(
                f"{min(h.seconds / profiled, 1.0):.0%} of the profiled steps in `{h.where}`"
                + (
                    f" (`{h.ops[0].name}` {min(h.ops[0].seconds / profiled, 1.0):.0%})"
                    if h.ops
                    else ""
                )
                for h in shown
            )
            + "."
        )
        ops = {o.name for h in shown for o in h.ops}
    calls = [c for c in real.host_calls if c.seconds >= _HOST_PLACE_SHARE * profiled][:2]
    if calls:
        # Host time outside ATen ops, by the user's calls into other code (the profiler's Python
        # tracer): `gc.collect()`, a checkpoint save, a tokenizer, every step.
        what += (
            " Of your code's calls into other code, "
            + ", ".join(
                f"`{c.call}` in `{c.where}` takes {c.seconds * 1e3:.3f} ms a step "
                f"({min(c.seconds / profiled, 1.0):.0%} of the profiled steps)"
                for c in calls
            )
            + "."
        )
        top = calls[0]
    if calls and "torch/utils/data/" not in calls[0].call:  # data loading: workers, below
        fixes = (
            Fix(
                "code",
                f"call `{top.call}` less often, or outside the step",
                change=f"`{top.call}` runs in `{top.where}` every step: run it every N steps "
                "(or once, before the loop), or in a background thread or a DataLoader worker "
                "if the step needs its result",
                tradeoff="whatever it does (collecting garbage, saving, logging) happens less "
                "often",
                source="PyTorch performance tuning guide (avoid work on the host in the step)",
            ),
            *fixes,
        )
    if shown:
        if "aten::stack" in ops and ops & {"aten::select", "aten::index"}:
            # Per-sample indexing then a stack: a map-style dataset's __getitem__ per index
            # and default_collate (the fifth blind round's TensorDataset already on the GPU,
            # 12.7x read as whole index batches, H200).
            what += (
                " Samples are taken one at a time and stacked into a batch (a DataLoader over "
                "a map-style dataset: `__getitem__` per index, then `default_collate`)."
            )
            fixes = (remedy("batched_indexing").fix(), *fixes)
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
        fixes=fixes,
    )


def allocator_findings(real: RealSteps) -> list[Finding]:
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


def sync_findings(real: RealSteps) -> list[Finding]:
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
