"""Compile time: where the capture's compile time went, the remedy that cuts it, and whether compiling pays back."""

from __future__ import annotations

import re

from ..capture import Capture
from ..compile_budget import KERNEL_COMPILE, OTHER, CompileBudget, compile_budget
from ..compile_payback import pay_back
from .catalog import remedy
from .parts import Cost, Finding, Fix
from .places import frame_of, frame_places

LEAST_SECONDS = 1.0  # compiles shorter than this are not worth a finding
# Lowering, fusion, code generation and kernel compiles: what a warm cache skips.
_CACHED_WORK = (
    KERNEL_COMPILE,
    "Inductor fusion and code generation",
    "Inductor graph passes and lowering",
    "AOTAutograd tracing and partitioning",
)
_CACHED_SHARE = 0.30  # of a cold compile, before the cache is worth naming
_AUTOTUNE_SHARE = 0.20
_RECOMPILE_SHARE = 0.20
_LEAST_REPEATS = 3  # copies of one block before compiling the block alone pays
# Dynamo names a module's parameters after its path: `L_self_modules_layers_modules_0_...`
# (torch >= 2.5, nn modules inlined): a number between `_modules_` parts is a container index.
_PARAM_NAME = re.compile(r"\b[LG]_\w+?_modules_\d+_\w*")


def repeated_blocks(capture: Capture) -> tuple[str, int, str] | None:
    """The container whose numbered children a compile's Dynamo graph holds most of, with
    that compile's id (`("transformer.h", 12, "1/0_1")`; "" for a compiled Sequential's own
    children), where there are at least _LEAST_REPEATS; else None."""
    best: tuple[str, int, str] | None = None
    for c in capture:
        graph = c.graph("dynamo_output_graph")
        if graph is None:
            continue
        seen: dict[str, set[str]] = {}
        for name in set(_PARAM_NAME.findall(graph.text)):
            parts = name.split("_modules_")
            for i, part in enumerate(parts[1:], start=1):
                index = part.split("_", 1)[0] if i == len(parts) - 1 else part
                if index.isdigit():  # the model itself a Sequential of blocks: container ""
                    seen.setdefault(".".join(parts[1:i]), set()).add(index)
        for container, ids in seen.items():
            if len(ids) >= _LEAST_REPEATS and (best is None or len(ids) > best[1]):
                best = (container, len(ids), str(c.id))
    return best


def compile_time_findings(capture: Capture) -> list[Finding]:
    """One finding for the capture's compile time (where it is at least LEAST_SECONDS): its
    figure and largest parts, the remedies the budget calls for (or "nothing to change"),
    and whether compiling pays back."""
    budget = compile_budget(capture)
    if budget.seconds < LEAST_SECONDS or all(work == OTHER for work, _ in budget.works):
        return []  # (a log with the metrics' totals alone: no stage to name)
    heaviest = max(budget.compiles, key=lambda c: c.seconds)
    fixes = _fixes(capture, budget)
    parts = ", ".join(
        f"{work} {s:.1f} s ({s / budget.seconds:.0%})" for work, s in budget.works[:3] if s > 0
    )
    label = f" ({budget.label})" if budget.label else ""
    what = f"Compile time {budget.seconds:.1f} s{label}: {parts}."
    if budget.recompile_s >= 0.05:
        what += f" {budget.recompile_s:.1f} s of it in recompiles."
    paid = pay_back(capture)
    if paid is not None:
        what += " " + paid.sentence()
    work, seconds = budget.works[0]
    ids = tuple(c.compile_id for c in sorted(budget.compiles, key=lambda c: -c.seconds))
    return [
        Finding(
            kind="compile_time",
            what=what,
            key="compile_time",
            user=frame_places(frame_of(capture, capture[heaviest.compile_id]), capture)[0],
            compile_ids=ids,
            cost=Cost(
                compile_s=seconds,
                note=f"{work}, of {budget.seconds:.1f} s compile time in all",
            ),
            fixes=tuple(fixes),
        )
    ]


def _fixes(capture: Capture, budget: CompileBudget) -> list[Fix]:
    """The catalog's compile-time remedies whose signature the budget shows, best first."""
    fixes: list[Fix] = []
    blocks = repeated_blocks(capture)
    if blocks is not None and not budget.warm:
        container, n, compile_id = blocks
        regional = remedy("regional_compile")
        path = f"model.{container}" if container else "model"
        fixes.append(
            regional.fix(
                change=regional.change.replace("model.{container}", path)
                + f" (compile {compile_id} holds {n} blocks of `{path}`)"
            )
        )
    cached = sum(budget.share(w) for w in _CACHED_WORK)
    if not budget.warm and cached >= _CACHED_SHARE:
        warm = remedy("warm_cache")
        change = warm.change
        if budget.caches == "fresh":
            change = (
                "this capture compiled with torch's caches off (`capturing(fresh=True)` or "
                "%%compile_fx): your own run, and `capturing()`, reuse them on the second run. "
                + change
            )
        fixes.append(warm.fix(change=change))
    if budget.share("autotuning") >= _AUTOTUNE_SHARE:
        fixes.append(remedy("autotune_cost").fix())
    if budget.recompile_s >= _RECOMPILE_SHARE * budget.seconds:
        n = sum(c.recompile for c in budget.compiles)
        fixes.append(
            Fix(
                "code",
                "remove the recompiles",
                change=f"{n} recompile{'s' if n != 1 else ''} took {budget.recompile_s:.1f} s: "
                "the recompile findings name the guard that failed and the change that keeps "
                "it from failing",
                tradeoff="",
                source="compilescope (the recompile findings)",
            )
        )
    if not fixes:
        fixes.append(remedy("nothing_to_change").fix())
    return fixes
