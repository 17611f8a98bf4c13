"""Compile time: where the capture's compile time went, the remedy that cuts it, and whether compiling pays back."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ..capture import Capture
from ..compile import Compile
from ..graph import COMPUTING_OPS
from ..measured.compile_budget import KERNEL_COMPILE, OTHER, CompileBudget, compile_budget
from ..measured.compile_payback import pay_back
from ..place import Place
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
# torch times `compile_time_autotune_time_us` only where max-autotune's options are on (GEMM
# template choices, torch/_inductor/select_algorithm.py; fused-node benchmarks, scheduler.py):
# a second of it is that mode's cost, whatever its share (the first blind round's
# max-autotune MLP on torch 2.11: 10.8 s, 19% of the compile; its logged config hid the mode).
_AUTOTUNE_SECONDS = 1.0
_SERIAL_SHARE = 0.40  # kernel compilation, of a cold compile, before one thread is worth naming
_RECOMPILE_SHARE = 0.20
# Compiling blocks alone pays where many blocks share few compiled graphs: blocks per distinct
# block (same parameters, same shapes). A 12-layer GPT-2 (12 per 1) compiled 2.2x faster by
# blocks; a ResNet-50 (16 blocks of 8 shapes, 2 per 1) 0.72x (H100, RESULTS.md).
_BLOCKS_PER_GRAPH = 3
# A parameter used this often in one Dynamo graph: a Python loop unrolled into the graph.
_UNROLLED_USES = 8
# A Dynamo graph whose operations mostly read none of its inputs rebuilds a constant every call
# (the fourth compile-time blind round's ALiBi bias, built by a Python loop in forward; a 30-row
# one is 121 of 127 operations): at least this share, and this many, before it is named.
_CONSTANT_SHARE = 0.5
_CONSTANT_OPS = 50
# Dynamo's inputs with their types: `L_self_modules_layers_modules_0_..._weight_: "f32[4, 4]..."`
# (torch >= 2.5, nn modules inlined): a number between `_modules_` parts is a container index.
_INPUT = re.compile(r'\b([LG]_\w+?): "([^"]*)"')


@dataclass(frozen=True)
class Blocks:
    """Numbered blocks of one container in a compile's Dynamo graph, by their shapes."""

    container: str  # "transformer.h"; "" for a compiled Sequential's own children
    blocks: int
    distinct: int  # of all the model's blocks, those that differ in parameters or shapes
    compile_id: str
    total: int  # numbered blocks in all the model's containers


def repeated_blocks(capture: Capture) -> Blocks | None:
    """The numbered blocks that a per-block compile would compile once each shape: where the
    model's blocks are at least _BLOCKS_PER_GRAPH per distinct one; else None."""
    best: Blocks | None = None
    for c in capture:
        graph = c.graph("dynamo_output_graph")
        if graph is None:
            continue
        members: dict[str, dict[str, list[tuple[str, str]]]] = {}  # container -> index -> params
        for name, kind in _INPUT.findall(_signature(graph.text)[0]):
            parts = name.split("_modules_")
            for i, part in enumerate(parts[1:], start=1):
                index, _, rest = part.partition("_") if i == len(parts) - 1 else (part, "", "")
                if index.isdigit():
                    inner = "_modules_".join([rest, *parts[i + 1 :]] if rest else parts[i + 1 :])
                    children = members.setdefault(".".join(parts[1:i]), {})
                    children.setdefault(index, []).append((inner, kind.split("]")[0]))
        # The whole model's numbered blocks against its distinct ones (a ResNet's stages are
        # containers of their own: 16 blocks of 8 shapes in all), named by its largest.
        groups = {k: v for k, v in members.items() if len(v) >= 2}
        if not groups:
            continue
        total = sum(len(v) for v in groups.values())
        distinct = sum(len({tuple(sorted(p)) for p in v.values()}) for v in groups.values())
        largest = max(groups, key=lambda k: len(groups[k]))
        found = Blocks(largest, len(groups[largest]), distinct, str(c.id), total)
        if total >= _BLOCKS_PER_GRAPH * distinct and (best is None or total > best.total):
            best = found
    return best


def _signature(text: str) -> tuple[str, str]:
    """A Dynamo graph's `forward` signature (its inputs, with their types) and its body."""
    start = text.find("def forward(")
    end = text.find("):\n", start)
    if start < 0 or end < 0:
        return "", text
    return text[start:end], text[end:]


def unrolled_loop(capture: Capture) -> tuple[str, int, str] | None:
    """A module whose parameters one Dynamo graph uses _UNROLLED_USES times or more (a Python
    loop over it, unrolled by Dynamo): (its path, the uses, the compile id); else None."""
    best: tuple[str, int, str] | None = None
    for c in capture:
        graph = c.graph("dynamo_output_graph")
        if graph is None:
            continue
        head, body = _signature(graph.text)
        for name, _kind in _INPUT.findall(head):
            if "_parameters_" not in name:
                continue
            uses = len(re.findall(rf"\b{re.escape(name.lower())}\b", body.lower()))
            if uses >= _UNROLLED_USES and (best is None or uses > best[1]):
                path = name.split("_parameters_")[0].split("_modules_", 1)[-1]
                best = (path.replace("_modules_", "."), uses, str(c.id))
    return best


@dataclass(frozen=True)
class ConstantWork:
    """Operations of one Dynamo graph that read none of its inputs, and where most come from."""

    operations: int
    of: int  # the graph's operations in all
    compile_id: str
    where: Place | None


def constant_work(capture: Capture) -> ConstantWork | None:
    """The graph with the most operations that depend on no input (a placeholder, a tensor
    held as an attribute, or an operation that reads one), where they are at least
    _CONSTANT_SHARE of its operations and _CONSTANT_OPS in number; else None."""
    best: ConstantWork | None = None
    for c in capture:
        graph = c.graph("dynamo_output_graph")
        if graph is None:
            continue
        constant: set[str] = set()
        places: Counter[Place] = Counter()
        operations = graph.op_count
        for node in graph.nodes:
            # Only computing nodes: a tensor the graph holds as an attribute (get_attr: a
            # compiled optimizer's state and parameters) is state, read like an input.
            if node.op not in COMPUTING_OPS:
                continue
            if all(name in constant for name in node.inputs):
                constant.add(node.name)
                if node.source is not None:
                    places[node.source] += 1
        if (
            len(constant) >= _CONSTANT_OPS
            and len(constant) >= _CONSTANT_SHARE * operations
            and (best is None or len(constant) > best.operations)
        ):
            where = places.most_common(1)[0][0] if places else None
            best = ConstantWork(len(constant), operations, str(c.id), where)
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
    paid = pay_back(capture, budget.seconds)
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
    # Also warm: a cache skips Inductor's work, not Dynamo's tracing of every block (a
    # 12-layer GPT-2 on an H100, warm: tracing 85% of 9.6-11.1 s).
    if blocks is not None:
        regional = remedy("regional_compile")
        path = f"model.{blocks.container}" if blocks.container else "model"
        shapes = (
            f"; {blocks.total} blocks in all, {blocks.distinct} distinct"
            if blocks.distinct > 1
            else ", all alike"
        )
        fixes.append(
            regional.fix(
                change=regional.change.replace("model.{container}", path)
                + f" (compile {blocks.compile_id} holds {blocks.blocks} blocks of `{path}`"
                f"{shapes})"
            )
        )
    loop = unrolled_loop(capture)
    if loop is not None:
        path, uses, compile_id = loop
        fixes.append(
            remedy("compile_loop_body").fix(
                change=remedy("compile_loop_body").change.replace("{module}", path)
                + f" (compile {compile_id} uses `{path}`'s parameters {uses} times)"
            )
        )
    constant = constant_work(capture)
    if constant is not None:
        at = f", most of them at {constant.where.label(capture.cells)}" if constant.where else ""
        precompute = remedy("precompute_constants")
        fixes.append(
            precompute.fix(
                constant.where,
                f"{precompute.change} ({constant.operations} of the {constant.of} operations of "
                f"compile {constant.compile_id} read none of its inputs{at})",
            )
        )
    if any(_dynamic_from_the_start(c) for c in capture):
        fixes.append(remedy("default_dynamic").fix())
    tuned_s = sum(
        t / 1e6
        for c in capture
        if isinstance(t := c.metrics.get("compile_time_autotune_time_us"), (int, float))
    )
    autotuning = max(budget.share("autotuning"), tuned_s / budget.seconds)
    if (
        _config_says(capture, _MAX_AUTOTUNE)
        or autotuning >= _AUTOTUNE_SHARE
        or tuned_s >= _AUTOTUNE_SECONDS
    ):
        tune = remedy("autotune_cost")
        spent = f" (autotuning took {tuned_s:.1f} s of the compile)" if tuned_s >= 0.05 else ""
        fixes.append(tune.fix(change=tune.change + spent))
    if (
        budget.share(KERNEL_COMPILE) >= _SERIAL_SHARE
        and not budget.warm
        and _config_says(capture, _ONE_COMPILE_THREAD)
    ):
        fixes.append(remedy("compile_threads").fix())
    cached = sum(budget.share(w) for w in _CACHED_WORK)
    cache_fix = remedy("warm_cache").fix() if not budget.warm and cached >= _CACHED_SHARE else None
    if cache_fix is not None and budget.caches == "fresh" and not fixes:
        # Cold on purpose (fresh): the user's own runs reuse the caches already (on by
        # default), so nothing to change here; a cold start elsewhere still has the cache's.
        fixes.append(_nothing(budget))
    if cache_fix is not None:
        fixes.append(cache_fix)
    # After the cache's: recompiles made by design (train and eval graphs, the second
    # compile-time round's control) leave "nothing to change" first.
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
        fixes.append(_nothing(budget))
    return fixes


def _nothing(budget: CompileBudget) -> Fix:
    nothing = remedy("nothing_to_change")
    change = nothing.change
    if budget.caches == "fresh":
        change += (
            "; this capture compiled cold on purpose (`fresh=True` or %%compile_fx): your own "
            "runs reuse torch's caches, on by default (for a new machine or container, the "
            "cache's artifacts below)"
        )
    return nothing.fix(change=change)


# What Inductor's config (as torch logged it with each compile) says of how it compiled.
_ONE_COMPILE_THREAD = re.compile(r'"compile_threads": 1\b')
_MAX_AUTOTUNE = re.compile(r'"max_autotune(_gemm)?": true')


# torch.compile(dynamic=True) turns Dynamo's `assume_static_by_default` off (its logged config).
_ALL_DYNAMIC = re.compile(r'"assume_static_by_default": false')


def _dynamic_from_the_start(c: Compile) -> bool:
    """A compile made with dynamic=True that holds size symbols: every size symbolic from the
    first call, changing or not."""
    config = c.metrics.get("dynamo_config")
    return isinstance(config, str) and bool(_ALL_DYNAMIC.search(config)) and bool(c.symbols)


def _config_says(capture: Capture, pattern: re.Pattern[str]) -> bool:
    """Some compile's logged Inductor config matches `pattern`."""
    for c in capture:
        config = c.metrics.get("inductor_config")
        if isinstance(config, str) and pattern.search(config):
            return True
    return False
