"""The compile-time budget: each compile id's compile time split into the kinds of work in it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Protocol

from ..compile import Compile, StageTime, compile_time, counted_elsewhere


class Compiles(Protocol):
    """What the budget reads of a capture (a Capture; `caches` where it has them)."""

    @property
    def compiles(self) -> tuple[Compile, ...]: ...


# The kinds of work, in the order torch does them. A stage (torch's dynamo_timed name) is put
# in the first kind one of whose prefixes it starts with; what no prefix names is "other".
KERNEL_COMPILE = "kernel compilation (C++ compiler or Triton)"
WORKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cache keys and lookups", ("CacheBase.", "inductor_codecache", "fx_graph_cache",
                                "aotautograd_cache", "autograd_cache", "_fx_graph_cache")),
    ("autotuning", ("CachingAutotuner.", "autotune", "select_algorithm", "benchmark",
                    "compile_time_autotune")),
    (KERNEL_COMPILE, ("compile_file", "async_compile", "PyCodeCache.", "triton_compile",
                      "StaticAutotunerFuture", "CppCodeCache", "TritonFuture")),
    ("Inductor fusion and code generation", ("Scheduler.", "PythonWrapperCodegen.",
                                             "GraphLowering.codegen", "GraphLowering.compile_to",
                                             "code_gen", "CppWrapper")),
    ("Inductor graph passes and lowering", ("GraphLowering.", "_recursive_pre_grad", "pass.post_grad",
                                            "_recursive_post_grad", "additional_fake_tensor_prop",
                                            "inductor_compile", "fx_codegen_and_compile",
                                            "compile_fx", "post_grad", "pre_grad")),
    ("AOTAutograd tracing and partitioning", ("aot_", "create_aot_dispatcher", "min_cut",
                                              "_recursive_joint_graph", "pass.joint_graph",
                                              "partition", "entire_backward_compile",
                                              "joint_graph")),
    ("Dynamo tracing and guards", ("bytecode_tracing", "compile_attempt", "dynamo",
                                   "entire_frame_compile", "build_guards", "gc", "bytecode_hooks",
                                   "insert_deferred_runtime_asserts", "_compile")),
)  # fmt: skip
# `backend_compile`'s own time (Inductor's work outside its finer stages) lands here too.
OTHER = "other compile work"


def work_of(stage: str) -> str:
    """The kind of work a torch stage name is."""
    for work, prefixes in WORKS:
        if stage.startswith(prefixes):
            return work
    return OTHER


@dataclass(frozen=True)
class CompileCost:
    """One compile id's compile time: the one figure shown everywhere, and its parts."""

    compile_id: str
    seconds: float  # torch's top-level stages (frame and lazy backward), else its metrics
    works: tuple[tuple[str, float], ...]  # (kind of work, seconds), largest first; add up
    cache: str  # "hit", "miss", "partly" (some hit), "off" (bypassed or disabled), "" unknown
    saved_s: float | None  # what its cache hits saved, torch's estimate
    recompile: bool  # a frame's second or later compile (a guard failed)
    counted_in: str = ""  # a restart: its time is in this compile id's (torch logs it there)


@dataclass(frozen=True)
class CompileBudget:
    """The capture's compile time: the sum of its compiles' figures, by kind of work."""

    seconds: float
    works: tuple[tuple[str, float], ...]
    compiles: tuple[CompileCost, ...]
    recompile_s: float  # of `seconds`, in recompiles
    caches: str  # "fresh" (turned off by compilescope), "user" (as the user had them), ""

    def warmth(self, compile_id: str) -> str:
        """ "cold" or "warm" for one compile id ("" where not known): what its time means."""
        for c in self.compiles:
            if c.compile_id == compile_id:
                if self.caches == "fresh" or c.cache in ("miss", "off"):
                    return "cold"
                return "warm" if c.cache in ("hit", "partly") else ""
        return ""

    def share(self, work: str) -> float:
        return dict(self.works).get(work, 0.0) / self.seconds if self.seconds > 0 else 0.0

    @property
    def warm(self) -> bool:
        """Some compile hit a cache (its time is not a cold compile's)."""
        return any(c.cache in ("hit", "partly") for c in self.compiles)

    @property
    def label(self) -> str:
        """Cold or warm, in words, to set beside the figure."""
        if self.caches == "fresh":
            return "cold: compiled with torch's caches off"
        hits = sum(c.cache == "hit" for c in self.compiles)
        if self.warm:
            saved = sum(c.saved_s or 0.0 for c in self.compiles)
            said = f", {saved:.1f} s saved" if saved > 0 else ""
            return f"warm: {hits} of {len(self.compiles)} compiles from torch's cache{said}"
        if any(c.cache == "miss" for c in self.compiles):
            return "cold: torch's caches missed"
        return ""


def stage_self_times(stages: tuple[StageTime, ...]) -> dict[str, float]:
    """Seconds spent in each stage itself (its time less its nested stages'), by stage name."""
    ordered = sorted(stages, key=lambda s: (s.start_us, s.depth))
    out: dict[str, float] = defaultdict(float)
    for i, stage in enumerate(ordered):
        end = stage.start_us + stage.duration_us
        inner = 0.0
        for s in ordered[i + 1 :]:
            if s.start_us >= end:
                break  # sorted by start: nothing later is inside
            if s.depth == stage.depth + 1:
                inner += s.duration_us
        out[stage.name] += max(stage.duration_us - inner, 0.0) / 1e6
    return out


def _cache(c: Compile) -> tuple[str, float | None]:
    results = [e.result for e in c.cache_events]
    saved = c.metrics.get("remote_cache_time_saved_s")  # torch's name: local hits count too
    saved_s = float(saved) if isinstance(saved, (int, float)) and saved > 0 else None
    if not results:
        return "", saved_s
    hits = results.count("hit")
    if hits == len(results):
        return "hit", saved_s
    if hits:
        return "partly", saved_s
    if "miss" in results:
        return "miss", saved_s
    return "off", saved_s


def compile_budget(capture: Compiles) -> CompileBudget:
    """Every compile id's compile time, by kind of work, and the capture's in all."""
    costs: list[CompileCost] = []
    by_work: dict[str, float] = defaultdict(float)
    for c in capture.compiles:
        recompile = (c.id.frame_compile_id or 0) > 0
        cache, saved = _cache(c)
        first = replace(c.id, attempt=0)
        if counted_elsewhere(c, capture.compiles):
            # Torch logs a restarted frame's stages under its first attempt and its metrics
            # under the restart (0/0 and 0/0_1): counted once, under the first.
            costs.append(CompileCost(str(c.id), 0.0, (), cache, saved, recompile, str(first)))
            continue
        seconds = compile_time(c) or 0.0
        works: dict[str, float] = defaultdict(float)
        for name, s in stage_self_times(c.stage_times).items():
            works[work_of(name)] += s
        if not works and seconds > 0:
            works[OTHER] = seconds  # only the metrics' total is known
        for work, s in works.items():
            by_work[work] += s
        costs.append(
            CompileCost(
                str(c.id),
                seconds,
                tuple(sorted(works.items(), key=lambda item: -item[1])),
                cache,
                saved,
                recompile,
            )  # fmt: skip
        )
    return CompileBudget(
        seconds=sum(c.seconds for c in costs),
        works=tuple(sorted(by_work.items(), key=lambda item: -item[1])),
        compiles=tuple(costs),
        recompile_s=sum(c.seconds for c in costs if c.recompile),
        caches=getattr(capture, "caches", ""),
    )
