"""Generated code of one compiled graph, split into its kernels."""

from __future__ import annotations

from dataclasses import dataclass, field

from .place import Place


@dataclass(frozen=True)
class AutotuneChoice:
    """One config Inductor's autotuner benchmarked for a Triton kernel, and what it measured."""

    config: str  # Triton's Config as printed: "XBLOCK: 1024, num_warps: 4, num_stages: 1"
    ms: float | None  # the autotuner's benchmark of it (None: it failed, torch timed it as inf)
    registers: int | None = None
    spills: int | None = None
    chosen: bool = False


@dataclass(frozen=True)
class Kernel:
    """One kernel: generated (triton, cpp, ...) or a call into an extern library (`extern`)."""

    name: str
    language: str  # "triton", "cpp", "cuda", "halide", "extern"
    source: str = ""
    calls: int = 0  # call sites in the wrapper's `call`
    fused_nodes: tuple[str, ...] = ()  # post-grad nodes it computes (Inductor provenance)
    origin_nodes: tuple[str, ...] = ()  # "Topologically Sorted Source Nodes" comment
    aten_ops: tuple[str, ...] = ()  # "Original ATen" comment
    source_lines: tuple[Place, ...] = ()  # user lines, from provenance stack traces
    # Inductor's estimate of the bytes one call reads and writes (`kernel_num_gb` in a Triton
    # kernel's inductor_meta, written when config.benchmark_kernel is on); None when unknown.
    bytes_moved: float | None = None
    ir: dict[str, str] = field(default_factory=dict)  # Triton IR stage (ttir, ptx...) -> text
    launch: dict[str, int] = field(default_factory=dict)  # num_warps, num_stages, shared...
    # The configs Inductor's runtime autotuner benchmarked when the kernel first ran (live
    # captures; a log holds none), the chosen one marked; () when it had one config.
    autotune: tuple[AutotuneChoice, ...] = ()


@dataclass(frozen=True)
class OutputCode:
    """Inductor's output module for one graph (`# AOT ID: ['0_forward']`)."""

    text: str
    path: str = ""
    aot_id: str = ""
    role: str = ""  # "forward", "backward", "inference" (from the AOT ID), or ""
    kernels: tuple[Kernel, ...] = ()
