"""Compile-time hot spots: the stage of torch's compile that takes most of the compile time."""

from __future__ import annotations

from collections import defaultdict

from ..capture import Capture
from ..compile import StageTime
from .parts import Cost, Finding
from .places import frame_of, frame_places

# torch's stage names (dynamo_timed) that mean the same work to a person, in plain words.
STAGE_WORDS = {
    "compile_file": "compiling the generated kernels (C++ compiler or Triton)",
    "async_compile.wait": "compiling the generated kernels (C++ compiler or Triton)",
    "PyCodeCache.load_by_key_path": "compiling the generated kernels (C++ compiler or Triton)",
    "triton_compile": "compiling the generated kernels (C++ compiler or Triton)",
    "bytecode_tracing": "Dynamo tracing the Python code",
    "Scheduler.codegen": "Inductor writing kernel code",
    "Scheduler.__init__": "Inductor fusing the graph into kernels",
    "GraphLowering.run": "Inductor lowering the graph",
    "aot_trace_joint_graph": "AOTAutograd tracing forward and backward",
    "min_cut_rematerialization_partition": "AOTAutograd partitioning forward and backward",
    "build_guards": "Dynamo building guards",
}
LEAST_SECONDS = 1.0  # compiles shorter than this are not worth a finding
LEAST_SHARE = 0.30  # nor is a stage below this share of the compile time


def self_times(stages: tuple[StageTime, ...]) -> dict[str, float]:
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


def compile_time_findings(capture: Capture) -> list[Finding]:
    """The kind of work that dominates the capture's compile time, where it dominates."""
    by_work: dict[str, float] = defaultdict(float)
    by_compile: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    total = 0.0
    for c in capture:
        total += sum(s.duration_us for s in c.stage_times if s.depth == 0) / 1e6
        for name, seconds in self_times(c.stage_times).items():
            work = STAGE_WORDS.get(name, f"`{name}`")
            by_work[work] += seconds
            by_compile[work][str(c.id)] += seconds
    if total < LEAST_SECONDS or not by_work:
        return []
    work, seconds = max(by_work.items(), key=lambda item: item[1])
    if seconds < LEAST_SHARE * total:
        return []
    ids = sorted(by_compile[work], key=lambda cid: -by_compile[work][cid])
    heaviest = capture[ids[0]]
    return [
        Finding(
            kind="compile_time",
            what=f"Compile time is mostly {work}: {seconds:.1f} s of {total:.1f} s "
            f"({seconds / total:.0%}).",
            key=f"compile_time:{work}",
            user=frame_places(frame_of(capture, heaviest), capture)[0],
            compile_ids=tuple(ids),
            cost=Cost(compile_s=seconds, note=f"of {total:.1f} s compile time in all"),
        )
    ]
