"""Speed findings from the user's real steps: where the step's time goes, and what makes it faster.

Each finding is detected from what was measured in the real steps (`Timings.real_steps`), never
guessed from the code alone, and carries its cost as time per step and share of the step. A
cause below `SHOWN_SHARE` of the step is not a finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from .budget import budget_findings, uncompiled_graphs
from .catalog import remedy
from .checkpointing import checkpoint_findings
from .convolutions import convolution_findings
from .debug_settings import debug_findings
from .dense_embeddings import dense_embedding_findings
from .float64_compute import float64_findings
from .host_tensors import host_tensor_findings
from .idle_time import allocator_findings, launch_bound_findings, sync_findings
from .padding import padding_findings
from .parallel_matmuls import parallel_matmul_findings
from .parts import Cost, Finding, Fix, Setting
from .perf import LIBRARY_MATMULS, SHOWN_SHARE, library_time
from .places import optimizer_place
from .recurrent_loops import recurrent_loop_findings
from .repeated_backward import repeated_backward_findings
from .slow_settings import UNMEASURED_KINDS, slow_setting_findings
from .unused_gradients import unused_gradient_findings
from .verdict import VERDICTS, verdict_findings

if TYPE_CHECKING:
    # Measured times only (live captures): a log's report (issue 34) does not import them.
    from ..measured.timing import RealSteps

# Optimizers with a fused implementation (torch/optim: `_fused_*`; CUDA, and CPU since torch
# 2.4 for Adam, AdamW, SGD and Adagrad).
_FUSED = {"Adam", "AdamW", "SGD", "Adagrad"}


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
        *debug_findings(real),
        *slow_setting_findings(capture, real),
        *_optimizer_findings(capture, real),
        *launch_bound_findings(capture, real),
        *_tf32_findings(capture, real),
        *sync_findings(real),
        *allocator_findings(real),
        *host_tensor_findings(real),
        *convolution_findings(capture, real),
        *checkpoint_findings(capture, real),
        *unused_gradient_findings(capture, real),
        *recurrent_loop_findings(capture, real),
        *padding_findings(capture, real),
        *repeated_backward_findings(capture, real),
        *float64_findings(capture, real),
        *dense_embedding_findings(capture, real),
        *parallel_matmul_findings(capture, real),
        *budget_findings(capture, real),
    ]
    shown = (*VERDICTS, *UNMEASURED_KINDS)
    return [f for f in found if (f.cost.share or 0.0) >= SHOWN_SHARE or f.kind in shown]


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


def _tf32_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    s = real.settings
    if s is not None and s.tf32_capable and s.matmul_precision in ("high", "medium"):
        return _fp32_with_tf32(capture, real)
    if s is None or not s.tf32_capable or s.matmul_precision != "highest":
        return []
    step_s, ids = library_time(
        capture, real, lambda op, cid: op in LIBRARY_MATMULS and _is_fp32(capture, cid, op)
    )
    if not ids:
        return []
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
            compile_ids=ids,
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
                remedy("bf16_autocast").fix(),
            ),
        )
    ]


# Below this share of the step, fp32 matmuls and convolutions under TF32 are no finding: what
# bf16 would win back of them is within a step's noise.
_FP32_WORTH = 0.25


def _fp32_with_tf32(capture: Capture, real: RealSteps) -> list[Finding]:
    """Matmuls and convolutions in fp32 (TF32 on: precision "high") taking a large share of a
    GPU step: no mixed precision. bf16 autocast halves their inputs' bytes and doubles the
    tensor cores' rate (the Tuning Guide's "use mixed precision")."""
    step_s, ids = library_time(
        capture,
        real,
        lambda op, cid: (
            (op in LIBRARY_MATMULS or op.startswith("convolution")) and _is_fp32(capture, cid, op)
        ),
    )
    wall = real.compiled.median_s
    if not ids or wall <= 0 or step_s / wall < _FP32_WORTH:
        return []
    share = step_s / wall
    return [
        Finding(
            kind="fp32_compute",
            what=(
                f"Matmuls and convolutions run in fp32 (TF32 on: precision "
                f"'{real.settings.matmul_precision if real.settings else ''}'), "
                f"{step_s * 1e3:.3f} ms per step ({share:.0%} of the step): the step trains "
                "without mixed precision. bf16 autocast runs them at twice TF32's rate on half "
                "the bytes."
            ),
            key="fp32_compute",
            compile_ids=ids,
            cost=Cost(
                step_s=step_s,
                share=share,
                note="fp32 library matmuls' and convolutions' time per step; bf16 wins back a "
                "part of it",
            ),
            fixes=(remedy("bf16_autocast").fix(),),
        )
    ]


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
