"""Measured times: compiled graphs eager vs compiled, and kernels, with what exactly was timed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sample:
    """Repeated measurements of one thing, in seconds: median and spread, never one run."""

    median_s: float
    min_s: float
    max_s: float
    repeats: int
    warmup: int = 0


@dataclass(frozen=True)
class GraphTiming:
    """One compiled graph run on inputs of its recorded shapes: the eager graph vs compiled."""

    compile_id: str
    what: str  # exactly what was timed, in words
    eager: Sample | None = None
    compiled: Sample | None = None
    note: str = ""  # why a time is missing, when one is
    # Peak memory one run allocated above what was allocated before it (CUDA: the allocator's
    # peak statistics; CPU: the profiler's allocation events); None where not measured.
    eager_peak_bytes: int | None = None
    compiled_peak_bytes: int | None = None

    @property
    def speedup(self) -> float | None:
        if self.eager is None or self.compiled is None or self.compiled.median_s <= 0:
            return None
        return self.eager.median_s / self.compiled.median_s


@dataclass(frozen=True)
class KernelTiming:
    """One kernel's time per call inside the compiled graph (profiler events of that kernel)."""

    compile_id: str
    kernel: str  # the Kernel's name in the capture (extern calls: `extern_kernels.mm`)
    time: Sample
    calls_per_run: float
    source: str = "torch.profiler"  # how it was measured
    # How the GPU launched it in the timed runs (the profiler's CUDA kernel records): grid and
    # block in (x, y, z), registers per thread. Empty / None on a CPU.
    grid: tuple[int, ...] = ()
    block: tuple[int, ...] = ()
    registers: int | None = None


@dataclass(frozen=True)
class Timings:
    """All measurements of a capture, with the device they ran on."""

    device: str = "cpu"
    graphs: tuple[GraphTiming, ...] = ()
    kernels: tuple[KernelTiming, ...] = ()
    measure_s: float = 0.0  # how long measuring took (compilescope's own cost)

    def kernels_of(self, compile_id: str) -> tuple[KernelTiming, ...]:
        return tuple(k for k in self.kernels if k.compile_id == compile_id)

    def kernel_sum_s(self, compile_id: str) -> float:
        """Sum of the kernels' medians times their calls: compare with the whole graph's time."""
        return sum(k.time.median_s * k.calls_per_run for k in self.kernels_of(compile_id))

    def gap_text(self, compile_id: str, graph_median_s: float) -> str:
        """Kernels against the whole graph: the time outside kernels, or why none is shown."""
        if not self.kernels_of(compile_id):
            return "no kernel times"
        inside = self.kernel_sum_s(compile_id)
        if inside > graph_median_s:
            # Kernels are timed in separate, profiled runs; on a CPU their OpenMP threads can
            # contend, so their sum can exceed the graph's own median. A negative gap is noise.
            return (
                f"{inside * 1e3:.3f} ms in kernels, more than the graph's median: kernels were"
                " timed in separate profiled runs; no gap shown"
            )
        return f"{inside * 1e3:.3f} ms in kernels, {(graph_median_s - inside) * 1e3:.3f} ms outside"
