"""Findings from measured time and memory: library/ATen calls, hot kernels, activation memory."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...common import human_bytes
from ..capture import Capture
from ..compile import Compile, compile_seconds
from ..measured.kernel_table import kernel_rows, step_total_s
from ..measured.step_budget import device_scale
from ..place import Place
from .parts import Cost, Finding, Fix, Setting
from .places import frame_of, frame_places, place, user_loc

if TYPE_CHECKING:
    from ..measured.timing import RealSteps

# Library calls Inductor makes on purpose (BLAS, cuDNN): max-autotune can race its own
# templates against them on a GPU.
# (`bias_addmm`: the addmm max-autotune picks when cuBLAS wins its race, bias fused.)
LIBRARY_MATMULS = {
    "mm",
    "addmm",
    "bias_addmm",
    "bmm",
    "baddbmm",
    "convolution",
    "_int_mm",
    "_scaled_mm",
}
SHOWN_SHARE = 0.10  # a kernel or op below this share of the step is not a finding
# An ATen fallback is one even untimed (a log: what it costs is unknown); timed, from this share
# (`aten.randint` at 0% of a GPU GPT-2 step was a finding with nothing to gain).
FALLBACK_SHARE = 0.01
# ATen ops Inductor leaves to a vendor library on purpose: no generated code is meant to replace
# them, so, like the library calls above, they are findings only by a large measured share.
# torch/_inductor/lowering.py registers the attention and RNN ones with make_fallback(...,
# warn=False); kernel/conv.py keeps convolution_backward on ATen (cuDNN) on CUDA unless its
# Triton templates are asked for ("on CUDA, profiling shows no gains on H100", torch 2.13).
LIBRARY_FALLBACKS = frozenset({
    "convolution_backward",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_cudnn_attention_backward",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_flash_attention_forward", "_flash_attention_backward",
    "_efficient_attention_forward", "_efficient_attention_backward",
    "_cudnn_rnn", "_cudnn_rnn_backward", "miopen_rnn", "miopen_rnn_backward",
})  # fmt: skip


def op_of(kernel: str) -> tuple[str, bool]:
    """(op name, is an ATen fallback) of an extern kernel's name: `extern_kernels.mm` is a
    library call Inductor chose; `torch.ops.aten.nonzero.default` an op it has no code for."""
    parts = kernel.split(".")
    if parts[0] == "extern_kernels" and len(parts) == 2:
        return parts[1], False
    if "aten" in parts[:-1]:
        rest = parts[parts.index("aten") + 1 :]
        return (rest[0] if rest else kernel), True
    return kernel, False


def library_time(
    capture: Capture, real: RealSteps, keep: Callable[[str, str], bool]
) -> tuple[float, tuple[str, ...]]:
    """The time per step of the library ops `keep(op, compile_id)` picks, scaled as the step
    budget's parts (never more than the step), and the compile ids they ran in."""
    step_s = 0.0
    ids: list[str] = []
    for row in kernel_rows(capture):
        op, _aten = op_of(row["kernel"])
        if keep(op, row["compile_id"]):
            step_s += row["per_step_s"] or 0.0
            ids.append(row["compile_id"])
    return step_s * device_scale(real), tuple(dict.fromkeys(ids))


def fallback_findings(capture: Capture) -> list[Finding]:
    """Ops that run outside Inductor's generated code, by measured share of the step: ATen
    fallbacks untimed or from FALLBACK_SHARE; library calls, and the ATen ops Inductor leaves
    to a library on purpose (LIBRARY_FALLBACKS), when they take a large share."""
    rows = [r for r in kernel_rows(capture) if r["language"] == "extern"]
    groups: dict[str, dict[str, list[Any]]] = defaultdict(
        lambda: {"rows": [], "ids": [], "kernels": []}
    )
    for r in rows:
        group = groups[r["kernel"]]
        group["rows"].append(r)
        group["ids"].append(r["compile_id"])
    for c in capture:  # ATen fallbacks that were not timed (a log, timings=False)
        for k in c.kernels:
            op, aten = op_of(k.name)
            if k.language == "extern" and aten and op not in LIBRARY_FALLBACKS:
                groups[k.name]["ids"].append(str(c.id))
                groups[k.name]["kernels"].append((c, k))
    device = capture.timings.device if capture.timings else ""
    on_gpu = bool(device) and not device.startswith("cpu")
    found = []
    for name, group in groups.items():
        op, aten = op_of(name)
        if on_gpu and not aten and op in LIBRARY_MATMULS:
            continue  # together, in `library_matmul_findings`, with max-autotune's cost
        share = sum(r["share"] or 0.0 for r in group["rows"]) if group["rows"] else None
        step = sum(r["per_step_s"] for r in group["rows"]) if group["rows"] else None
        library = not aten or op in LIBRARY_FALLBACKS
        if library and (share is None or share < SHOWN_SHARE):
            continue
        if share is not None and share < FALLBACK_SHARE:
            continue
        ids = tuple(dict.fromkeys(group["ids"]))
        user = _kernel_user(capture, name, ids)
        share_text = f", {share:.0%} of the step" if share is not None else ""
        if not aten:
            what = f"`{op}` runs as a library call (extern kernel)"
        elif library:
            what = (
                f"`aten.{op}` runs in a library kernel that Inductor calls on purpose (cuDNN, "
                "oneDNN, flash attention: no generated code is meant to replace it)"
            )
        else:
            what = f"`aten.{op}` runs as an ATen fallback (Inductor has no generated code for it)"
        found.append(
            Finding(
                kind="fallback_op",
                what=what + share_text + ".",
                key=f"fallback_op:{name}",
                user=user,
                compile_ids=ids,
                cost=Cost(step_s=step, share=share, note="time per step of its calls"),
            )
        )
    return found


def library_matmul_findings(capture: Capture) -> list[Finding]:
    """Library matmuls and convolutions (cuBLAS, cuDNN) taking a large share of a GPU step,
    together: max-autotune races Inductor's Triton templates against them when compiling. Its
    price is compile time, per distinct shape: the finding gives today's compile time and the
    shapes, and trying the fix measures both sides (`FixTrial`, `diff`: the steps it pays back
    after). Absent on a CPU, and where these compiles already ran with max-autotune."""
    device = capture.timings.device if capture.timings else ""
    if not device or device.startswith("cpu"):
        return []
    real = capture.timings.real_steps if capture.timings else None
    # The step the shares are of (kernel_rows' own), else the real steps' compiled median.
    whole = step_total_s(capture) or (real.compiled.median_s if real is not None else 0.0)
    if whole <= 0:
        return []
    per_op: dict[str, float] = defaultdict(float)
    ids = []
    for r in kernel_rows(capture):
        op, aten = op_of(r["kernel"])
        if r["language"] == "extern" and not aten and op in LIBRARY_MATMULS:
            per_op[op] += (r["per_step_s"] or 0.0) / whole
            ids.append(r["compile_id"])
    if real is not None:  # as the budget's parts: never more than the step
        scale = device_scale(real)
        per_op = defaultdict(float, {op: v * scale for op, v in per_op.items()})
    share = sum(per_op.values())
    step = share * whole
    compiles = [c for c in capture if str(c.id) in set(ids)]
    if share < SHOWN_SHARE or all(_autotuned(c) for c in compiles):
        return []
    ops = ", ".join(f"`{op}` {s:.0%}" for op, s in sorted(per_op.items(), key=lambda i: -i[1]))
    shapes = {shape for c in compiles for shape in _gemm_shapes(c)}
    # Every attempt of these frames: torch logs a restarted frame's compile events under its
    # first attempt (`1/0`) and its kernels under the restart (`1/0_1`).
    frames = {replace(c.id, attempt=0) for c in compiles}
    took = compile_seconds(c for c in capture if replace(c.id, attempt=0) in frames)
    cost_now = f"; these compiles took {took:.1f} s, backward included" if took else ""
    shape_text = f", each of the {len(shapes)} distinct shapes" if shapes else ""
    what = (
        f"Library matmuls and convolutions (cuBLAS/cuDNN: {ops}) take {share:.0%} of the step "
        f"({step * 1e3:.3f} ms). max-autotune would race Inductor's Triton templates against "
        f"them{shape_text}, at compile time{cost_now}."
    )
    autotune = Setting("torch._inductor.config.max_autotune_gemm", "set", True)
    return [
        Finding(
            kind="library_matmul",
            what=what,
            key="library_matmul",
            user=_kernel_user(capture, "extern_kernels." + max(per_op, key=per_op.__getitem__),
                              tuple(dict.fromkeys(ids))),
            compile_ids=tuple(dict.fromkeys(ids)),
            cost=Cost(step_s=step, share=share,
                      note="library matmuls' and convolutions' time per step"),
            fixes=(
                Fix("setting", "max-autotune for matmuls", (autotune,), source=(
                    "torch.compile docs (mode='max-autotune'); Inductor's max_autotune_gemm"),
                    tradeoff="longer compiles: every distinct shape is benchmarked against "
                    "Triton templates; no sure win: on five MLP training steps and a bf16 GPT-2 "
                    "step on an H100 and an H200 it was never measurably faster and twice slower "
                    "(up to 1.3x), for 42-129 s more compiling (benchmarks/RESULTS.md). Trying it "
                    "measures both the step and the compile time, and says which way the step went. "
                    "mode='max-autotune-no-cudagraphs' also tunes the generated kernels, for a "
                    "longer compile still"),
            ),
        )
    ]  # fmt: skip


def _autotuned(c: Compile) -> bool:
    """Whether the compile ran with max-autotune for matmuls (its logged Inductor config)."""
    raw = c.metrics.get("inductor_config")
    if not isinstance(raw, str) or "max_autotune" not in raw:
        return False
    try:
        config = json.loads(raw)
    except ValueError:
        return False
    return bool(config.get("max_autotune") or config.get("max_autotune_gemm"))


def _gemm_shapes(c: Compile) -> set[tuple[str, tuple[tuple[str, ...], ...]]]:
    """(op, input shapes) of each library matmul/convolution in the compile's post-grad graphs:
    what max-autotune benchmarks once each."""
    shapes = set()
    for g in c.graphs.get("inductor_post_grad_graph", ()):
        nodes = {n.name: n for n in g.nodes}
        for n in g.nodes:
            parts = n.target.split(".")  # torch.ops.aten.mm.default
            op = parts[parts.index("aten") + 1] if "aten" in parts[:-1] else ""
            if op not in LIBRARY_MATMULS:
                continue
            inputs = tuple(
                src.tensors[0].shape
                for name in n.inputs
                if (src := nodes.get(name)) is not None and src.tensors
            )
            shapes.add((op, inputs))
    return shapes


def hot_kernel_findings(capture: Capture, top: int = 3) -> list[Finding]:
    """The generated kernels that take the largest share of a measured step, each with its
    roofline verdict against the device's measured peaks."""
    t = capture.timings
    rows = [
        r
        for r in kernel_rows(capture)
        if r["language"] != "extern" and (r["share"] or 0) >= SHOWN_SHARE
    ][:top]
    found = []
    for r in rows:
        verdict = _verdict(r, t.peak_bytes_per_s if t else None, t.peak_flops if t else None)
        found.append(
            Finding(
                kind="hot_kernel",
                what=f"`{r['kernel']}` ({r['role']}) takes {r['share']:.0%} of the step"
                + (f"; {verdict}" if verdict else "")
                + ".",
                key=f"hot_kernel:{r['compile_id']}:{r['role']}:{r['kernel']}",
                user=_kernel_user(capture, r["kernel"], (r["compile_id"],)),
                compile_ids=(r["compile_id"],),
                cost=Cost(
                    step_s=r["per_step_s"],
                    share=r["share"],
                    bytes=int(r["bytes"]) if r["bytes"] else None,
                    note="time per step; bytes one call moves",
                ),
            )
        )
    return found


def _verdict(row: dict[str, Any], peak_bw: float | None, peak_flops: float | None) -> str:
    """Memory- or compute-bound (FLOPs per byte against the ridge of the measured roofs), and
    the share of the bound's peak it reaches."""
    flops, nbytes = row["flops"], row["bytes"]
    if not peak_bw or not nbytes:
        return ""
    ridge = peak_flops / peak_bw if peak_flops else None
    if flops and ridge and flops / nbytes >= ridge:
        share = row["of_peak_flops"]
        return "compute-bound" + (f" at {share:.0%} of peak FLOP/s" if share else "")
    share = row["of_peak_bandwidth"]
    return "memory-bound" + (f" at {share:.0%} of the measured bandwidth" if share else "")


def _kernel_user(capture: Capture, kernel: str, ids: tuple[str, ...]) -> Place | None:
    """The user's line a kernel computes (Inductor's provenance stacks), else the frame's."""
    compiles = [c for c in capture if str(c.id) in ids]
    for c in compiles:
        for k in c.kernels:
            loc = user_loc(k.source_lines) if k.name == kernel else None
            if loc is not None:
                return place(loc, capture)
    return frame_places(frame_of(capture, compiles[0]), capture)[0] if compiles else None


def memory_findings(capture: Capture, least_saving: float = 0.10) -> list[Finding]:
    """Where a budget sweep was made: what an activation memory budget would save, and the
    recomputation it costs."""
    found = []
    for c in capture:
        # c.sweep() reads the compile's graphs: look only where re-partitions were made.
        if sum(r.partitioner == "min_cut" for r in c.repartition_results) < 2:
            continue
        sweep = c.sweep()
        if sweep is None or sweep.captured is None or sweep.captured.symbolic_activations:
            continue  # symbolic sizes: the bytes a budget would save are not known
        now = sweep.captured.activation_bytes
        # (budget, re-partition) where a budget was set: no budget (None) is not a setting.
        points = [(r.memory_budget, r) for r in sweep.min_cut if r.memory_budget is not None]
        smaller = [(b, r) for b, r in points if r.partition.activation_bytes < now]
        if not now or not smaller:
            continue
        best = min(r.partition.activation_bytes for _, r in smaller)
        # The largest budget (least recomputation) that gets half the possible saving.
        pick_budget, pick = max(
            ((b, r) for b, r in smaller if now - r.partition.activation_bytes >= (now - best) / 2),
            key=lambda point: point[0],
        )
        saved = now - pick.partition.activation_bytes
        if saved < least_saving * now:
            continue
        budget = Setting("torch._functorch.config.activation_memory_budget", "set", pick_budget)
        recomputed = pick.partition.recomputed_ops
        flops = pick.partition.recompute_flops
        found.append(
            Finding(
                kind="activation_memory",
                what=f"{c.id} keeps {human_bytes(now)} of activations for the backward; a "
                f"memory budget of {pick_budget:g} saves {human_bytes(saved)} "
                f"({saved / now:.0%}), as the partitioner predicts.{_held_beyond(c, now)}",
                key=f"activation_memory:{c.id}",
                user=frame_places(frame_of(capture, c), capture)[0],
                compile_ids=(str(c.id),),
                cost=Cost(bytes=now, saved_bytes=saved, note="activation memory, and what the "
                          "budget would save"),
                fixes=(
                    Fix("setting", budget.python(), (budget,), source="compilescope (budget sweep)",
                        tradeoff=f"the backward recomputes {recomputed} ops"
                        + (f" ({flops:,} FLOPs)" if flops else "")),
                ),
            )
        )  # fmt: skip
    return found


def _held_beyond(c: Compile, predicted: int) -> str:
    """What the compiled code held beyond the prediction (copies after the partition)."""
    held = c.held.activation_bytes if c.held is not None and c.held.measured else None
    if held is None or held <= predicted:
        return ""
    return (
        f" The compiled code held {human_bytes(held)} (measured): {human_bytes(held - predicted)}"
        " in copies Inductor made after the partition, which no budget removes."
    )
