"""Findings: what to change, from any capture (live, log, JSON), ranked by what each costs."""

from __future__ import annotations

from dataclasses import replace
from typing import SupportsIndex, overload

from ...common import human_bytes
from ..capture import Capture
from .breaks import break_findings
from .compile_time import compile_time_findings
from .cudagraph_sizes import padded_sizes_first
from .parts import Finding
from .perf import (
    fallback_findings,
    hot_kernel_findings,
    library_matmul_findings,
    memory_findings,
)
from .recompiles import failure_findings, limit_findings, recompile_findings
from .root_cause import onto_their_causes
from .speed import speed_findings
from .torch_hints import Registry

# How much a kind matters before its numbers: a frame left uncompiled outweighs a graph break,
# which outweighs a recompile; measured costs are added on top (see `score`).
SEVERITY = {
    # The verdict first (issue 42): a compiled step slower than eager outranks every cause.
    "compiled_slower": 1000.0,
    # ... and one that is not faster (compiling bought nothing measurable).
    "compiled_not_faster": 1000.0,
    # No speed verdict could be made (too few steps, no optimizer step): said at the top.
    "steps_not_timed": 900.0,
    "eager_frame": 60.0,
    "recompile_limit": 55.0,
    "data_dependent": 45.0,
    "graph_break": 40.0,
    "recompile": 30.0,
    # Its fix saves compile time and frames, not step time (measured: 1.03x and 0.88x).
    "compiled_fused_optimizer": 30.0,
    "fallback_op": 10.0,
    "activation_memory": 8.0,
    "hot_kernel": 8.0,
    "compile_time": 5.0,
    # Speed findings weigh as a graph break, plus their measured share of the user's own step
    # (below): a cause of 40% of the step outranks a break that costs no measured step time.
    "eager_optimizer": 40.0,
    "launch_bound": 40.0,
    "host_bound": 40.0,
    "fp32_matmul": 40.0,
    "fp32_compute": 40.0,
    "host_sync": 40.0,
    "cuda_malloc": 40.0,
    "host_tensors": 40.0,
    "unused_gradients": 40.0,
    "channels_last": 10.0,
    # One setting, the first the Tuning Guide gives a CNN; its share is the convolutions'
    # time, of which it wins back a part: ranked with a speed finding's severity and a share
    # weighed between channels-last's and a fallback op's.
    "cudnn_benchmark": 40.0,
    # cuDNN turned off (a workaround left in): every convolution runs torch's own kernels, an
    # image at a time. Said before the causes whose time it inflates, as a debugging setting.
    "cudnn_disabled": 500.0,
    "recurrent_loop": 40.0,
    "padding": 40.0,
    "repeated_backward": 40.0,
    "float64_compute": 40.0,
    "dense_embedding_grads": 40.0,
    "parallel_matmuls": 40.0,
    # Its share is an estimate of the forward the backward repeats (findings/checkpointing.py).
    "activation_checkpointing": 40.0,
    # A debugging setting in a timed step costs every op and buys nothing there: its fix comes
    # before any cause whose time it inflates (below the verdict alone).
    "debug_mode": 500.0,
    # Settings that choose slower kernels for reproducibility or leave attention unfused:
    # their cost is spread over many ops, not measured apart; said just after debugging's.
    "deterministic_algorithms": 450.0,
    "sdpa_math_only": 450.0,
    "library_matmul": 10.0,
    # From the step budget (findings/budget.py): measured parts whose remedy removes them.
    "host_copies": 40.0,
    "exposed_collectives": 40.0,
    "eager_ops_outside": 40.0,
    "hand_written_attention": 40.0,
    "unplaced_time": 20.0,
    "not_compiled": 40.0,
    # DDP's own code, not the user's: it weighs by its measured cost (SHARE_WEIGHT) alone.
    "ddp_internal_break": 5.0,
}
# Points per whole step's share: an ATen fallback is time Inductor could not touch; a hot
# kernel may already be near its roof.
# A speed finding is measured on the user's own steps and its fix is known to remove much of
# that time: half the step outranks a graph break that costs no measured time.
SHARE_WEIGHT = {
    "fallback_op": 60.0,
    # A break's share is the time between the graphs it splits: at most what a fix saves (the
    # eager code at the break may still run), so weighed as a fallback op.
    "graph_break": 60.0,
    "data_dependent": 60.0,
    "hot_kernel": 30.0,
    "eager_optimizer": 100.0,
    "launch_bound": 100.0,
    "host_bound": 100.0,
    "fp32_matmul": 100.0,
    # Its share is the fp32 ops' whole time, of which bf16 wins back a part (about half).
    "fp32_compute": 60.0,
    "host_sync": 100.0,
    "cuda_malloc": 100.0,
    "host_tensors": 100.0,
    "unused_gradients": 100.0,
    # Its share is the convolutions' time, not what channels-last saves of it (measured 1.03x
    # on a bf16 CNN on an H100): ranked as a hot kernel, below causes whose fix removes time.
    "channels_last": 30.0,
    "cudnn_benchmark": 40.0,
    "cudnn_disabled": 100.0,
    "recurrent_loop": 100.0,
    "padding": 100.0,
    "repeated_backward": 100.0,
    "float64_compute": 100.0,
    "dense_embedding_grads": 100.0,
    "parallel_matmuls": 100.0,
    "activation_checkpointing": 100.0,
    "debug_mode": 100.0,
    # Its share is the library calls' time, of which max-autotune won back nothing measurable
    # on five MLP steps (twice slower): ranked as the library calls were before it (a
    # fallback op), below causes whose fix removes time.
    "library_matmul": 60.0,
    "host_copies": 100.0,
    "exposed_collectives": 100.0,
    "eager_ops_outside": 80.0,
    "hand_written_attention": 100.0,
    "unplaced_time": 40.0,
    "not_compiled": 40.0,
    "ddp_internal_break": 60.0,
    # Their share is the uncompiled frame's eager ops (findings: _eager_ops_to_their_cause).
    "recompile_limit": 100.0,
    "eager_frame": 100.0,
}

# Per share of the step in the host's waits a break makes (an `if` on a tensor's value): its
# fix removes them, as a host sync finding's fix removes its waits.
WAITED_WEIGHT = 100.0

# Memory a fix must save before it weighs in the rank: on the devices people train on (16-80
# GiB), less changes no batch size. A budget that saves 2 KiB of a small GPT-2's activations
# ranked above `mm` at 26% of the step (issue 31); it is still listed, by its kind alone.
MEMORY_MATTERS_BYTES = 64 * 2**20


def score(finding: Finding) -> float:
    """The rank of a finding: its kind's severity, plus 5 per break, restart, recompile,
    uncompiled or partly eager frame (up to 10 of them; where the step's share was not
    measured), 2 per second of compile time it makes
    (up to 30 s), points for its share of the step (the waits a break makes as WAITED_WEIGHT),
    and up to 20 for the memory a fix saves
    (where it saves at least MEMORY_MATTERS_BYTES)."""
    n, cost = finding.counts, finding.cost
    events = n.breaks + n.restarts + n.recompiles + n.eager_frames + n.partly_eager_frames
    if cost.share is not None or finding.kind == "ddp_internal_break":
        # (DDP's own breaks are not the user's: they weigh by a measured cost alone.)
        # The count of breaks stands in for their cost only where the step was not measured:
        # a break that costs 8% of the step ranks below an eager optimizer taking 26% of it.
        events = 0
    total = SEVERITY.get(finding.kind, 0.0) + 5.0 * min(events, 10)
    total += 2.0 * min(cost.compile_s or 0.0, 30.0)
    total += SHARE_WEIGHT.get(finding.kind, 0.0) * (cost.share or 0.0)
    if cost.waited_s and cost.step_s and cost.share:
        # The host's waits at a break go with it (findings/root_cause.py): that part of its
        # share weighs as a speed finding's, whose fix removes the time.
        waited = cost.share * min(cost.waited_s / cost.step_s, 1.0)
        total += (WAITED_WEIGHT - SHARE_WEIGHT.get(finding.kind, 0.0)) * waited
    if cost.bytes and cost.saved_bytes and cost.saved_bytes >= MEMORY_MATTERS_BYTES:
        total += 20.0 * cost.saved_bytes / cost.bytes
    return round(total, 3)


class Findings(tuple[Finding, ...]):
    """The findings of a capture, costliest first: a tuple that prints as numbered findings
    (a terminal, `print`; a notebook shows them as HTML), not as dataclasses."""

    def __repr__(self) -> str:
        return text(self)

    __str__ = __repr__

    @overload
    def __getitem__(self, index: SupportsIndex) -> Finding: ...
    @overload
    def __getitem__(self, index: slice) -> Findings: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Finding | Findings:
        if isinstance(index, slice):  # found[:3] prints as findings too
            return Findings(tuple.__getitem__(self, index))
        return tuple.__getitem__(self, index)


def findings(capture: Capture, registry: Registry | None = None) -> Findings:
    """Every finding of a capture, costliest first.

    `registry` is torch's graph-break registry ("GB0291" -> versions; compilescope.trace.
    graph_break_registry.load() reads the installed torch's without importing it): it fills in
    what a message leaves out. Without it, findings use torch's messages alone.
    """
    found = [
        *break_findings(capture, registry),
        *recompile_findings(capture),
        *limit_findings(capture, registry),
        *failure_findings(capture, registry),
        *fallback_findings(capture),
        *library_matmul_findings(capture),
        *hot_kernel_findings(capture),
        *memory_findings(capture),
        *compile_time_findings(capture),
        *speed_findings(capture),
    ]
    found = onto_their_causes(found, capture)
    found = padded_sizes_first(found, capture)
    ranked = [replace(f, score=score(f)) for f in found]
    ranked.sort(key=lambda f: (-f.score, f.key))
    return Findings(ranked)


NONE_FOUND = "no findings: nothing broke, recompiled or stood out"


def none_found(capture: Capture) -> str:
    """What to say when `capture` has no findings: with no step times (a log, timings off),
    only breaks, recompiles and fallbacks could have been found, not what slows the step."""
    if capture.timings is not None and (capture.timings.kernels or capture.timings.real_steps):
        return NONE_FOUND
    return (
        "no findings: nothing broke or recompiled. Speed is not judged without step times (a "
        "log, or a capture with timings off, has none): compilescope.capturing() or "
        "%%compile_fx time your steps."
    )


def text(found: tuple[Finding, ...], limit: int | None = None) -> str:
    """The findings for a terminal: a few lines each, costliest first."""
    if not found:
        return NONE_FOUND
    lines = []
    for i, f in enumerate(found[:limit] if limit else found, 1):
        gb = f" ({f.torch.gb_id})" if f.torch and f.torch.gb_id else ""
        lines.append(f"{i}. [{f.kind.replace('_', ' ')}] {f.what}{gb}")
        where = where_text(f)
        if where:
            lines.append(f"   where: {where}")
        often = often_text(f)
        if often:
            lines.append(f"   how often: {often}")
        cost = cost_text(f)
        if cost:
            lines.append(f"   cost: {cost}")
        for fix in f.fixes[:2]:
            at = f" (at {fix.where.label()})" if fix.where else ""
            lines.append(f"   fix: {fix.python() or fix.change + at}")
    if limit and len(found) > limit:
        lines.append(f"... and {len(found) - limit} more")
    return "\n".join(lines)


def where_text(f: Finding) -> str:
    """Where, in one line: the user's line -> the library line [compile ids]."""
    parts = []
    for p in (f.user, f.at):
        if p is not None:
            parts.append(p.label() + (f" `{p.code[:70]}`" if p.code else ""))
    ids = ", ".join(f.compile_ids[:6]) + (" ..." if len(f.compile_ids) > 6 else "")
    return " -> ".join(parts) + (f" [{ids}]" if ids else "")


def often_text(f: Finding) -> str:
    """How often, in words: "3 breaks, 3 restarts"."""
    n = f.counts
    parts = [
        f"{value} {name}{'' if value == 1 else 's'}"
        for value, name in (
            (n.breaks, "break"),
            (n.restarts, "restart"),
            (n.recompiles, "recompile"),
            (n.eager_frames, "uncompiled frame"),
            (n.partly_eager_frames, "partly eager frame"),
        )
        if value
    ]
    return ", ".join(parts)


def cost_text(f: Finding) -> str:
    """What it costs, in words, from the measured figures only."""
    c = f.cost
    parts = []
    if c.graphs:
        parts.append(f"{c.graphs} more graph{'s' if c.graphs > 1 else ''}")
    if c.compile_s:
        parts.append(f"{c.compile_s:.2f} s compile time")
    if c.step_s is not None:
        parts.append(f"{c.step_s * 1e3:.3f} ms per step")
    if c.share is not None:
        parts.append(f"{c.share:.0%} of the step")
    if c.bytes:
        parts.append(human_bytes(c.bytes))
    if c.saved_bytes:
        parts.append(f"{human_bytes(c.saved_bytes)} to save")
    return ", ".join(parts)
