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
    # The backward of the same graph (autograd through the eager graph vs AOTAutograd's compiled
    # backward), timed alone after a forward run, with random gradients of the outputs' layout;
    # None where nothing needs grad (inference, no_grad) or it could not run.
    eager_backward: Sample | None = None
    compiled_backward: Sample | None = None

    @property
    def speedup(self) -> float | None:
        return _ratio(self.eager, self.compiled)

    @property
    def backward_speedup(self) -> float | None:
        return _ratio(self.eager_backward, self.compiled_backward)

    def step_s(self, which: str = "compiled") -> float | None:
        """Forward + backward medians (forward alone where there is no backward)."""
        forward = self.compiled if which == "compiled" else self.eager
        backward = self.compiled_backward if which == "compiled" else self.eager_backward
        if forward is None:
            return None
        return forward.median_s + (backward.median_s if backward else 0.0)


def _ratio(eager: Sample | None, compiled: Sample | None) -> float | None:
    if eager is None or compiled is None or compiled.median_s <= 0:
        return None
    return eager.median_s / compiled.median_s


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
    role: str = "forward"  # the output module it belongs to: forward, backward or inference
    # Bytes of the distinct tensors one call is passed (inputs and outputs, each once), and the
    # FLOPs of one call where they follow from its shapes (matmuls, convolutions); None if unknown.
    bytes_per_call: float | None = None
    flops_per_call: float | None = None

    @property
    def per_run_s(self) -> float:
        return self.time.median_s * self.calls_per_run


@dataclass(frozen=True)
class GraphShare:
    """One compiled graph's part of a real step: the time of its kernels per step."""

    compile_id: str
    role: str  # forward, backward or inference
    seconds: float  # per step: the kernels' time (device time on a GPU, wall on a CPU)
    kernels: int  # how many kernel names ran


@dataclass(frozen=True)
class OutsideWork:
    """Device work of the real steps that ran in no compiled graph, grouped: eager ATen ops by
    the op that launched them, copies by direction and host memory kind, collectives by name.

    `seconds` is device time per step; for a collective, only the part no other kernel ran
    beside (exposed: the step waited for it), with the overlapped rest in `overlapped_s`."""

    kind: str  # "eager_op", "copy", "memset", "collective"
    name: str  # "aten::mul", "host-to-device copy (pageable)", "ncclDevKernel_AllReduce..."
    seconds: float  # per step
    calls: float  # per step
    overlapped_s: float = 0.0  # collectives: the time hidden under other kernels, per step
    # eager ops: the user's function they ran in, "file.py:line fn" (line: the function's first
    # line, as the profiler's Python tracer names a function); "" where none was seen
    where: str = ""


@dataclass(frozen=True)
class ReadPlace:
    """Where the user's code reads tensors into Python numbers (`.item()`, `if t > 0:`) in the
    real steps: their function, "file.py:line fn" (line: the function's first line, as the
    profiler's Python tracer names a function), and how many reads a step it makes."""

    where: str
    per_step: float


@dataclass(frozen=True)
class HostOp:
    """One ATen op's CPU time per step in a function of the user's (`HostTime.ops`)."""

    name: str  # "aten::randn"
    seconds: float  # per step


@dataclass(frozen=True)
class HostTime:
    """The CPU's time per step in ATen ops run by one function of the user's code ("file.py:line
    fn", as `ReadPlace`): where a host-bound step's host time goes (outermost ops only)."""

    where: str
    seconds: float  # per step
    ops: tuple[HostOp, ...] = ()  # its costliest ops, most first


@dataclass(frozen=True)
class HostCall:
    """The host's time per step in one call the user's code makes into other code (a library
    function or a built-in, by the profiler's Python tracer): `gc.collect` in "train.py:8
    step". Calls that run the step itself (modules, backward, the optimizer) are not here."""

    where: str  # the user's function, "file.py:line fn"
    call: str  # "gc.collect", "save (torch/serialization.py)"
    seconds: float  # per step, the call's whole time


@dataclass(frozen=True)
class GraphGap:
    """The wall time between one compiled graph's last kernel and the next graph's first, in
    the user's own steps: the eager code, guards and calls between two graphs (a graph break's
    cost, where the break split one frame into these two)."""

    before: str  # compile id of the graph that ran first
    after: str  # compile id of the graph that ran next
    role: str  # forward, backward or inference (both graphs')
    seconds: float  # per step
    count: float  # such gaps per step


@dataclass(frozen=True)
class OptimizerSeen:
    """An optimizer whose steps a capture followed: what it is, and how its step ran.

    `foreach` / `fused` are the flags it was built with (None: torch's default, which is
    foreach on CUDA where every parameter is on CUDA); `eager`: its step ran as Python, outside
    any compiled graph. `file` / `line` / `code`: where the user's code builds it, when found."""

    name: str  # the class, e.g. "AdamW"
    params: int  # parameter tensors it updates
    foreach: bool | None = None
    fused: bool | None = None
    eager: bool = True
    file: str = ""
    line: int = 0
    code: str = ""


@dataclass(frozen=True)
class StepSettings:
    """The settings of the moment that decide how fast a step can be (read when it was timed)."""

    device_name: str = ""  # e.g. "NVIDIA H100 80GB HBM3"
    tf32_capable: bool = False  # a GPU whose tensor cores run TF32 (compute capability >= 8)
    matmul_precision: str = ""  # torch.get_float32_matmul_precision(): highest, high, medium
    cudnn_tf32: bool | None = None  # torch.backends.cudnn.allow_tf32 (convolutions)
    cudnn_benchmark: bool | None = None  # torch.backends.cudnn.benchmark (its auto-tuner)
    cudnn_enabled: bool | None = None  # torch.backends.cudnn.enabled (off: torch's own kernels)
    # Debugging settings that slow every step: autograd's anomaly detection, and
    # CUDA_LAUNCH_BLOCKING=1 (each launch waits for its kernel). None: not read.
    anomaly_detection: bool | None = None
    launch_blocking: bool | None = None
    profiler: bool | None = None  # an autograd profiler (torch.profiler, emit_nvtx) recording
    # Settings that pick slower kernels for another goal: deterministic algorithms
    # (torch.use_deterministic_algorithms, cudnn.deterministic), and scaled_dot_product_attention
    # with every fused backend (flash, memory-efficient, cuDNN) turned off, math alone left.
    deterministic: bool | None = None
    sdpa_math_only: bool | None = None


@dataclass(frozen=True)
class RealSteps:
    """The user's own steps, timed while they ran (not re-runs of single graphs): wall time per
    step with every compiled graph's kernels, and the rest of the step split out.

    A step runs from one `optimizer.step()` to the next. `compiled` is the wall time of the
    steps as the user's code ran them (nothing of ours in them); `eager`, of the steps run
    next with torch.compile's stance set to "force_eager" (the same code, not compiled).
    The split comes from the steps after `compiled`'s, run with every kernel wrapped (kernel
    times are the kernels' own: device time on a GPU), and adds up to `compiled`'s median:
    graphs_s + outside_graphs_s + between_s. `split_wall` is those wrapped steps' wall time;
    split_wall - compiled is what wrapping and the profiler cost the CPU.
    `first_step` / `eager_first_step`: the index (from 0, in optimizer steps since the capture
    began) of the first step of each window, to compare with the user's own step log.
    """

    device: str
    compiled: Sample
    eager: Sample | None = None
    split_wall: Sample | None = None
    busy_s: float | None = None  # GPU: time per step the device ran any kernel (union)
    graphs: tuple[GraphShare, ...] = ()
    # Kernels that ran in no compiled graph (eager ops between graphs, the optimizer); on a
    # CPU, everything outside the compiled graphs' kernels (Python, eager ops, the optimizer).
    outside_graphs_s: float = 0.0
    # The rest of the step: launch and Python overhead, guards, AOTAutograd's runtime wrappers,
    # the autograd engine, waiting; on a GPU, the step's wall time the device was idle.
    between_s: float = 0.0
    kernels: tuple[KernelTiming, ...] = ()  # every compiled kernel, timed in the real steps
    first_step: int | None = None
    eager_first_step: int | None = None
    # Each timed step's wall time, in order (the samples behind `compiled` and `eager`).
    step_walls: tuple[float, ...] = ()
    eager_walls: tuple[float, ...] = ()
    note: str = ""  # what was skipped and why (no optimizer step, a recompile in the window)
    # Wall time per compiled step spent inside eager optimizer steps (pre hook to post hook),
    # median over `compiled`'s steps; None where no optimizer step ran eagerly.
    optimizer_s: float | None = None
    optimizers: tuple[OptimizerSeen, ...] = ()
    settings: StepSettings | None = None
    # GPU, from the split's profile: the CPU's waits for the GPU per step (cudaStreamSynchronize
    # and the like), reads of a tensor into a Python number (.item()), and the device's idle
    # time around those waits (its queue drained: nothing to run until the CPU launches again).
    syncs_per_step: float | None = None
    scalar_reads_per_step: float | None = None
    sync_idle_s: float | None = None
    # ... and where the reads into Python numbers are, most first (GPU profiles with stacks).
    read_places: tuple[ReadPlace, ...] = ()
    # GPU: calls per step to CUDA's allocator (cudaMalloc, cudaFree) and the CPU's time in them:
    # none in steady steps, where torch's caching allocator reuses its memory.
    allocator_calls_per_step: float | None = None
    allocator_s: float | None = None
    # GPU, from the split's profile: the CPU's time per step in ATen ops by the user's function
    # they ran in, most first (the first few).
    host_time: tuple[HostTime, ...] = ()
    # The gaps between consecutive compiled graphs of one role, from the split's steps (wall
    # time on the host between one graph's last kernel call and the next graph's first).
    gaps: tuple[GraphGap, ...] = ()
    # GPU, from the split's profile: the user's code's calls into other code, by host time.
    host_calls: tuple[HostCall, ...] = ()
    # GPU, from the split's profile: what ran outside the compiled graphs, by what it is.
    outside: tuple[OutsideWork, ...] = ()

    @property
    def graphs_s(self) -> float:
        return sum(g.seconds for g in self.graphs)

    @property
    def speedup(self) -> float | None:
        return _ratio(self.eager, self.compiled)

    def graph_seconds(self, compile_id: str, role: str | None = None) -> float:
        """One compile's measured time per step (its graphs' kernels), of one role if given."""
        return sum(
            g.seconds
            for g in self.graphs
            if g.compile_id == compile_id and (role is None or g.role == role)
        )

    def runs_per_step(self, compile_id: str, role: str) -> float:
        """How many times per step one compile's graph of a role ran (0: not seen): its least
        called kernel's calls, since every kernel of a graph runs at least once a run."""
        calls = [
            k.calls_per_run for k in self.kernels if k.compile_id == compile_id and k.role == role
        ]
        return min(calls) if calls else 0.0


@dataclass(frozen=True)
class Timings:
    """All measurements of a capture, with the device they ran on."""

    device: str = "cpu"
    graphs: tuple[GraphTiming, ...] = ()
    kernels: tuple[KernelTiming, ...] = ()
    measure_s: float = 0.0  # how long measuring took (compilescope's own cost)
    # The device's measured peaks, to put kernels against: a large copy's bytes per second
    # (read + write) and a large matmul's FLOP/s; None where not measured.
    peak_bytes_per_s: float | None = None
    peak_flops: float | None = None
    # The user's own steps, timed as they ran (capturing() and cells that run several steps).
    real_steps: RealSteps | None = None
    # Why no window of the user's steps was timed, where they were followed (no optimizer
    # step, a loop too short, a failure while timing); "" when a window ran or none was asked.
    real_steps_note: str = ""

    def kernels_of(self, compile_id: str, role: str | None = None) -> tuple[KernelTiming, ...]:
        """The kernel times of one compile id; of one output module's role when given."""
        return tuple(
            k
            for k in self.kernels
            if k.compile_id == compile_id and (role is None or _role(k) == role)
        )

    def kernel_sum_s(self, compile_id: str, role: str | None = None) -> float:
        """Sum of the kernels' medians times their calls: compare with the whole graph's time."""
        return sum(k.per_run_s for k in self.kernels_of(compile_id, role))

    def graph(self, compile_id: str) -> GraphTiming | None:
        return next((g for g in self.graphs if g.compile_id == compile_id), None)

    def gap_text(self, compile_id: str, graph_median_s: float, role: str = "forward") -> str:
        """Kernels against the whole graph: the time outside kernels, or why none is shown."""
        if not self.kernels_of(compile_id, role):
            return "no kernel times"
        inside = self.kernel_sum_s(compile_id, role)
        if inside > graph_median_s:
            # Kernels are timed in separate, profiled runs; on a CPU their OpenMP threads can
            # contend, so their sum can exceed the graph's own median. A negative gap is noise.
            return (
                f"{inside * 1e3:.3f} ms in kernels, more than the graph's median: kernels were"
                " timed in separate profiled runs; no gap shown"
            )
        return f"{inside * 1e3:.3f} ms in kernels, {(graph_median_s - inside) * 1e3:.3f} ms outside"


def _role(k: KernelTiming) -> str:
    # An inference graph's kernels are its forward: one name for "the graph that ran first".
    return "forward" if k.role == "inference" else k.role


@dataclass(frozen=True)
class Rates:
    """What one call of a kernel achieved: bytes moved, bytes/s and FLOP/s (None: unknown)."""

    bytes: float | None
    bytes_per_s: float | None
    flops_per_s: float | None


def achieved_rates(kt: KernelTiming, timings: Timings, bytes_moved: float | None = None) -> Rates:
    """One kernel's bandwidth and FLOP/s per call: Inductor's bytes estimate where it wrote one
    (`bytes_moved`), else the bytes of the tensors a call was passed, over the measured median.

    Sizes taken from whole argument tensors are an upper bound (a kernel may read a slice of
    one): a rate above the device's measured peak says so, and is not given as a rate.
    """
    nbytes = bytes_moved or kt.bytes_per_call
    per_call = kt.time.median_s
    bandwidth = nbytes / per_call if nbytes and per_call > 0 else None
    flops = kt.flops_per_call / per_call if kt.flops_per_call and per_call > 0 else None
    if bandwidth and timings.peak_bytes_per_s and bandwidth > timings.peak_bytes_per_s:
        bandwidth = None
    if flops and timings.peak_flops and flops > timings.peak_flops:
        flops = None
    return Rates(nbytes, bandwidth, flops)
