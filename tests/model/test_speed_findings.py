"""Speed findings from real steps: detected from what was measured, ranked by ms per step, absent
when they do not apply (no torch needed: real steps written by hand onto a recorded capture)."""

from __future__ import annotations

from dataclasses import replace

import compilescope
import pytest
from compilescope.model.findings.ranked import findings, text
from compilescope.model.findings.speed import SHOWN_SHARE
from compilescope.model.measured.timing import (
    GraphShare,
    HostOp,
    HostTime,
    KernelTiming,
    OptimizerSeen,
    OutsideWork,
    ReadPlace,
    RealSteps,
    Sample,
    StepSettings,
    Timings,
)

STEP = 0.020  # a 20 ms step


def _sample(s: float) -> Sample:
    return Sample(s, s * 0.95, s * 1.05, 10)


def _with_real(capture, **real) -> compilescope.Capture:
    device = real.pop("device", "cuda:0")
    steps = RealSteps(device=device, compiled=_sample(STEP), **real)
    return replace(capture, timings=Timings(device=device, real_steps=steps))


def _adam(**flags) -> OptimizerSeen:
    return OptimizerSeen(
        "Adam", 96, flags.get("foreach", False), flags.get("fused"), True, "train.py", 12,
        "opt = torch.optim.Adam(model.parameters(), foreach=False)",
    )  # fmt: skip


def _kinds(found) -> list[str]:
    return [f.kind for f in found]


def test_an_eager_optimizer_taking_half_the_step_ranks_first_with_its_fixes(loaded):
    capture = _with_real(loaded("gpt2"), optimizer_s=0.011, optimizers=(_adam(),), device="cpu")
    found = findings(capture)
    top = found[0]
    assert top.kind == "eager_optimizer"
    assert "`Adam`" in top.what and "55% of the step" in top.what and "96 parameter" in top.what
    assert top.user is not None and top.user.line == 12  # where the optimizer is built
    assert [f.title for f in top.fixes] == [
        "a fused optimizer",
        "a foreach optimizer",
        "compile the optimizer step",
    ]
    assert "fused=True" in top.fixes[0].change
    assert top.cost.step_s == 0.011 and abs(top.cost.share - 0.55) < 1e-9
    # Above the logging break that costs no measured time, in the text a user reads first.
    assert "eager optimizer" in text(found, 1)


def test_an_optimizer_below_the_shown_share_compiled_or_fused_is_not_a_finding(loaded):
    small = _with_real(loaded("gpt2"), optimizer_s=STEP * SHOWN_SHARE * 0.5, optimizers=(_adam(),))
    assert "eager_optimizer" not in _kinds(findings(small))
    compiled = _with_real(
        loaded("gpt2"), optimizer_s=0.011, optimizers=(replace(_adam(), eager=False),)
    )
    assert "eager_optimizer" not in _kinds(findings(compiled))
    # Fused: the one change left (compiling its step) was measured not to help on a GPU.
    fused = _with_real(loaded("gpt2"), optimizer_s=0.011, optimizers=(_adam(fused=True),))
    assert "eager_optimizer" not in _kinds(findings(fused))
    # Beside a fused one, a per-parameter optimizer is still named, itself.
    both = _with_real(
        loaded("gpt2"),
        optimizer_s=0.011,
        optimizers=(_adam(fused=True), replace(_adam(), params=4)),
    )
    (f,) = [f for f in findings(both) if f.kind == "eager_optimizer"]
    assert "over 4 parameter tensors" in f.what and f.fixes[0].title == "a fused optimizer"
    assert "all 2 optimizers that stepped eagerly, together" in f.what  # one time for both
    assert "together" not in findings(_with_real(loaded("gpt2"), optimizer_s=0.011,
                                                 optimizers=(_adam(),)))[0].what  # fmt: skip
    assert "0.84x" in f.fixes[-1].tradeoff  # compiling the step: measured slower than fused


def test_torchs_default_is_foreach_on_cuda_so_no_foreach_fix_there(loaded):
    # AdamW built with torch's defaults (foreach=None): on CUDA that is the foreach step already
    # (an AMP GPT-2 loop on an H100 offered "build it with foreach=True", which changes nothing).
    default = replace(_adam(), foreach=None)
    titles = {
        device: [x.title for x in _optimizer(loaded, device, default).fixes]
        for device in ("cuda:0", "cpu")
    }
    assert titles["cuda:0"] == ["a fused optimizer", "compile the optimizer step"]
    assert titles["cpu"] == [
        "a fused optimizer",
        "a foreach optimizer",
        "compile the optimizer step",
    ]
    # Built with foreach=False on CUDA, the foreach fix stays.
    assert "a foreach optimizer" in [x.title for x in _optimizer(loaded, "cuda:0", _adam()).fixes]


def _optimizer(loaded, device: str, seen: OptimizerSeen):
    capture = _with_real(loaded("gpt2"), optimizer_s=0.011, optimizers=(seen,), device=device)
    (f,) = [f for f in findings(capture) if f.kind == "eager_optimizer"]
    return f


def test_a_gpu_step_idle_between_kernels_is_launch_bound_with_cuda_graphs_first(loaded):
    kernels = tuple(
        KernelTiming("1/0_1", f"triton_poi_{i}", _sample(5e-6), 2.0, role="forward")
        for i in range(40)
    )
    capture = _with_real(
        loaded("gpt2"),
        busy_s=0.004,
        kernels=kernels,
        graphs=(GraphShare("1/0_1", "forward", 0.0004, 40),),
    )
    (f,) = [f for f in findings(capture) if f.kind == "launch_bound"]
    assert "idle 16.000 ms of the 20.000 ms step (80%)" in f.what
    assert "80 compiled kernel launches per step" in f.what
    assert f.fixes[0].settings[0].python() == "torch.compile(..., mode='reduce-overhead')"
    assert findings(capture)[0].kind == "launch_bound"
    # The optimizer's own idle time is its own finding, not counted twice.
    both = _with_real(
        loaded("gpt2"), busy_s=0.004, kernels=kernels, optimizer_s=0.010, optimizers=(_adam(),)
    )
    (lb,) = [f for f in findings(both) if f.kind == "launch_bound"]
    assert abs(lb.cost.step_s - 0.006) < 1e-9
    # Under CUDA graphs no kernel is launched one by one: CUDA graphs are not offered again.
    replayed = _with_real(loaded("gpt2"), busy_s=0.004)
    (rf,) = [f for f in findings(replayed) if f.kind == "launch_bound"]
    assert "already run as CUDA graphs" in rf.what and rf.fixes[0].title == "fewer, bigger launches"
    # ... also where the profiler found the replayed kernels by name.
    by_name = replace(kernels[0], source="real steps, torch.profiler (CUDA graph replay)")
    seen = _with_real(loaded("gpt2"), busy_s=0.004, kernels=(by_name,))
    (sf,) = [f for f in findings(seen) if f.kind == "launch_bound"]
    assert "CUDA graphs" not in [x.title for x in sf.fixes]
    # Host syncs keep the CPU from queueing kernels ahead: removing them comes first (the
    # blind set's `.item()` loop ranked its sync finding below this one, CUDA graphs first).
    synced = _with_real(loaded("gpt2"), busy_s=0.004, kernels=kernels, syncs_per_step=2.0)
    (yf,) = [f for f in findings(synced) if f.kind == "launch_bound"]
    assert "2 host syncs per step" in yf.what and "remove them first" in yf.what
    assert [x.title for x in yf.fixes][:2] == [
        "keep values on the device, read them rarely",
        "CUDA graphs",
    ]


def test_a_whole_model_graph_run_per_micro_batch_puts_one_bigger_micro_batch_first(loaded):
    # The fourth blind round's Llama: 4 micro-batches of 4 accumulated, launch-bound (79%),
    # answered with CUDA graphs (one batch of 16: 3.44x). GPT-2's graph 1/0_1 takes 28
    # parameters; its kernels ran 4 times per optimizer step.
    kernels = tuple(
        KernelTiming("1/0_1", f"triton_poi_{i}", _sample(5e-6), 4.0 * (1 + i % 2), role="forward")
        for i in range(40)
    )
    adam = replace(_adam(), params=28)
    capture = _with_real(loaded("gpt2"), busy_s=0.004, kernels=kernels, optimizers=(adam,))
    (f,) = [f for f in findings(capture) if f.kind == "launch_bound"]
    assert "runs 4 times per optimizer step (gradient accumulation" in f.what
    assert [x.title for x in f.fixes][:2] == ["one bigger micro-batch", "CUDA graphs"]
    assert "gradient_accumulation_steps" in f.fixes[0].change
    # A graph of a block's parameters (regional compilation: once per block) is not the model.
    blocks = _with_real(loaded("gpt2"), busy_s=0.004, kernels=kernels,
                        optimizers=(replace(adam, params=290),))  # fmt: skip
    (b,) = [f for f in findings(blocks) if f.kind == "launch_bound"]
    assert "optimizer step" not in b.what and b.fixes[0].title == "CUDA graphs"


def test_a_gpu_idle_far_longer_than_its_launches_take_is_host_bound(loaded):
    # The second blind round's inline data loading: 102 ms idle a step around 32 compiled
    # launches (3.2 ms a launch; launch-bound loops measured 20-60 us). CUDA graphs would not
    # help: the host is busy with other work.
    kernels = tuple(
        KernelTiming("0/0", f"triton_poi_{i}", _sample(5e-6), 1.0, role="forward")
        for i in range(32)
    )
    eager = (OutsideWork("eager_op", "aten::copy_", 1e-5, 4.0, where="me/train.py:40 step"),)
    capture = _with_real(loaded("gpt2"), busy_s=0.002, kernels=kernels, outside=eager)
    kinds = _kinds(findings(capture))
    assert "host_bound" in kinds and "launch_bound" not in kinds
    (f,) = [f for f in findings(capture) if f.kind == "host_bound"]
    assert "idle 18.000 ms of the 20.000 ms step (90%)" in f.what
    assert "far longer than its 36 kernel launches a step take" in f.what
    assert f.fixes[0].title == "move the host's other work out of the step"
    assert "num_workers" in f.fixes[0].change and "CUDA graphs" not in [x.title for x in f.fixes]
    assert "ATen ops on the CPU" not in f.what  # no host time recorded: nothing said of it
    # Where the host's time goes, by the user's function (a dataset's __getitem__ run inline);
    # a function under 5% of the step is not named. It survives the JSON.
    host = (
        HostTime("me/data.py:65 __getitem__", 0.012),
        HostTime("me/train.py:40 step", 0.0004),
    )
    placed = _with_real(
        loaded("gpt2"), busy_s=0.002, kernels=kernels, outside=eager, host_time=host
    )
    placed = compilescope.Capture.from_json(placed.to_json())
    assert placed.timings.real_steps.host_time == host
    (h,) = [f for f in findings(placed) if f.kind == "host_bound"]
    assert h.what.endswith("Its ATen ops on the CPU take 60% of the profiled steps in "
                           "`me/data.py:65 __getitem__`.")  # fmt: skip
    # At 100 us a launch it is launch-bound still, with CUDA graphs first.
    many = tuple(replace(k, calls_per_run=5.0) for k in kernels)
    busy = _with_real(loaded("gpt2"), busy_s=0.002, kernels=many, outside=eager)
    (lb,) = [f for f in findings(busy) if f.kind == "launch_bound"]
    assert "host_bound" not in _kinds(findings(busy)) and lb.fixes[0].title == "CUDA graphs"


def test_launches_that_are_mostly_eager_ops_name_the_function_they_run_in(loaded):
    # The second blind round's per-sample loss: a Python loop over the batch launches most of
    # the step's kernels eagerly; where they run is what to batch.
    kernels = tuple(
        KernelTiming("0/0", f"triton_poi_{i}", _sample(5e-6), 1.0, role="forward")
        for i in range(40)
    )
    eager = (
        OutsideWork("eager_op", "aten::mul", 1e-3, 1024.0, where="me/train.py:70 weighted_loss"),
        OutsideWork(
            "eager_op", "aten::nll_loss", 1e-3, 512.0, where="me/train.py:70 weighted_loss"
        ),
        OutsideWork("eager_op", "aten::add_", 1e-4, 8.0, where="me/train.py:90 step"),
    )
    capture = _with_real(loaded("gpt2"), busy_s=0.004, kernels=kernels, outside=eager)
    (f,) = [f for f in findings(capture) if f.kind == "launch_bound"]
    assert (
        "1544 more launches a step are eager ops, 1536 of them in `me/train.py:70 "
        "weighted_loss`: vectorize that code (one op over a whole batch or list of tensors, "
        "not a Python loop of small ones) or compile it." in f.what
    )
    assert "parameter tensors" not in f.what  # 1024 and 512 a step: not the 96 parameters'


def test_eager_ops_once_per_parameter_name_the_foreach_ops(loaded):
    # The second blind round's hand-written gradient clipping: pow, sum, add and mul_ once per
    # parameter tensor (290) every step, in the loop's function.
    kernels = tuple(
        KernelTiming("0/0", f"triton_poi_{i}", _sample(5e-6), 1.0, role="forward")
        for i in range(40)
    )
    where = "me/train.py:80 step"
    eager = tuple(
        OutsideWork("eager_op", name, 1e-3, 290.0, where=where)
        for name in ("aten::pow", "aten::sum", "aten::add", "aten::mul_")
    ) + (OutsideWork("eager_op", "aten::nll_loss_forward", 1e-5, 1.0, where=where),)
    fused = replace(_adam(fused=True), params=290)
    capture = _with_real(
        loaded("gpt2"), busy_s=0.004, kernels=kernels, outside=eager, optimizers=(fused,)
    )
    (f,) = [f for f in findings(capture) if f.kind == "launch_bound"]
    assert "`aten::pow` 290 a step for 290 parameter tensors, `aten::sum` 290 a step" in f.what
    assert "nll_loss" not in f.what.split("vectorize", 1)[1]
    assert f.fixes[0].title.startswith("torch's multi-tensor (foreach) ops")
    assert "clip_grad_norm_(params, max_norm, foreach=True)" in f.fixes[0].change
    # Calls that are no multiple of the parameter count are no per-parameter loop.
    odd = tuple(replace(w, calls=401.0) for w in eager)
    other = _with_real(
        loaded("gpt2"), busy_s=0.004, kernels=kernels, outside=odd, optimizers=(fused,)
    )
    (g,) = [f for f in findings(other) if f.kind == "launch_bound"]
    assert "parameter tensors" not in g.what and not g.fixes[0].title.startswith("torch's multi")


def test_cuda_allocator_calls_every_step_are_named_with_empty_cache(loaded):
    # The second blind round's `torch.cuda.empty_cache()` after every step: its idle time had
    # read as launch-bound (CUDA graphs as the fix). The allocator's time is its own finding,
    # and not counted again in the idle time between launches.
    kernels = tuple(
        KernelTiming("0/0", f"triton_poi_{i}", _sample(5e-6), 1.0, role="forward")
        for i in range(96)
    )
    capture = _with_real(
        loaded("gpt2"), busy_s=0.012, kernels=kernels, allocator_calls_per_step=180.0,
        allocator_s=0.005,
    )  # fmt: skip
    again = compilescope.Capture.from_json(capture.to_json())
    found = findings(again)
    (f,) = [f for f in found if f.kind == "cuda_malloc"]
    assert "5.000 ms (25%) in 180 calls a step to CUDA's allocator" in f.what
    assert "empty_cache()" in f.what and "empty_cache()" in f.fixes[0].change
    assert "launch_bound" not in _kinds(found)  # 8 - 5 ms idle: 15%, under the idle share
    steady = _with_real(loaded("gpt2"), busy_s=0.019, allocator_calls_per_step=0.0)
    assert "cuda_malloc" not in _kinds(findings(steady))


def test_a_busy_gpu_or_a_cpu_step_is_not_launch_bound(loaded):
    busy = _with_real(loaded("gpt2"), busy_s=0.019)
    assert "launch_bound" not in _kinds(findings(busy))
    cpu = _with_real(loaded("gpt2"), device="cpu", between_s=0.015)
    assert "launch_bound" not in _kinds(findings(cpu))


def _tf32_capture(loaded, precision: str, capable: bool = True):
    mm = tuple(
        KernelTiming("1/0_1", name, _sample(0.004), 1.0, role="forward")
        for name in ("extern_kernels.mm", "extern_kernels.addmm")
    )
    settings = StepSettings("NVIDIA H100 80GB HBM3", capable, precision, True)
    return _with_real(loaded("gpt2"), kernels=mm, settings=settings, busy_s=STEP)


def test_fp32_matmuls_on_a_tf32_gpu_name_the_precision_setting(loaded):
    found = findings(_tf32_capture(loaded, "highest"))
    assert found[0].kind == "fp32_matmul"
    f = found[0]
    assert "full fp32" in f.what and "H100" in f.what and "8.000 ms per step (40%" in f.what
    assert f.fixes[0].title == 'torch.set_float32_matmul_precision("high")'
    assert f.fixes[0].python() == "torch.backends.cuda.matmul.allow_tf32 = True"
    assert "precision" in f.fixes[0].tradeoff
    assert f.fixes[1].title == "mixed precision: bf16 autocast"
    # The same matmuls' time is not offered max-autotune beside it: TF32 first, then measure.
    assert "library_matmul" not in _kinds(found)


def test_no_tf32_finding_where_it_does_not_apply(loaded):
    with_tf32 = _kinds(findings(_tf32_capture(loaded, "high")))
    assert "fp32_matmul" not in with_tf32
    assert "library_matmul" in with_tf32  # TF32 on and matmuls still 40%: max-autotune next


def test_fp32_matmuls_with_tf32_on_taking_much_of_the_step_say_mixed_precision(loaded):
    # Training without autocast, TF32 on (precision "high"): 40% of the step in fp32 matmuls.
    (f,) = [f for f in findings(_tf32_capture(loaded, "high")) if f.kind == "fp32_compute"]
    assert "run in fp32 (TF32 on: precision 'high'), 8.000 ms per step (40%" in f.what
    assert f.fixes[0].title == "mixed precision: bf16 autocast"
    assert "torch.autocast('cuda', dtype=torch.bfloat16)" in f.fixes[0].change
    # Under a quarter of the step: within what bf16 could win back and the noise, no word.
    real = _tf32_capture(loaded, "high").timings.real_steps
    kernels = tuple(replace(k, time=_sample(0.002)) for k in real.kernels)  # 4 ms: 20%
    small = _with_real(loaded("gpt2"), kernels=kernels, settings=real.settings, busy_s=STEP)
    assert small.timings.real_steps.settings.matmul_precision == "high"
    assert "fp32_compute" not in _kinds(findings(small))
    assert "fp32_matmul" not in _kinds(findings(_tf32_capture(loaded, "highest", capable=False)))


def test_no_speed_findings_without_real_steps(loaded):
    kinds = _kinds(findings(loaded("gpt2")))
    assert not {"eager_optimizer", "launch_bound", "fp32_matmul"} & set(kinds)


def test_speed_fields_survive_json(loaded):
    capture = _with_real(
        loaded("gpt2"),
        optimizer_s=0.011,
        optimizers=(_adam(),),
        settings=StepSettings("cpu", False, "highest", None),
    )
    again = compilescope.Capture.from_json(capture.to_json())
    assert again.timings.real_steps.optimizers == (_adam(),)
    assert again.timings.real_steps.settings.matmul_precision == "highest"
    assert [f.kind for f in findings(again)][:1] == ["eager_optimizer"]


def test_waits_for_the_gpu_are_named_with_the_idle_time_they_cause(loaded):
    capture = _with_real(
        loaded("gpt2"), busy_s=0.012, syncs_per_step=3.0, scalar_reads_per_step=3.0,
        sync_idle_s=0.006,
    )  # fmt: skip
    found = findings(capture)
    (f,) = [f for f in found if f.kind == "host_sync"]
    assert "waits for the GPU 3 times per step" in f.what and "`.item()`" in f.what
    assert "idle 6.000 ms per step (30%)" in f.what and f.fixes[0].title == "read values less often"
    # The idle time around the waits is not counted again as launch-bound (8 - 6 = 2 ms: 10%).
    assert "launch_bound" not in _kinds(found)
    quiet = _with_real(loaded("gpt2"), busy_s=0.019, syncs_per_step=1.0, sync_idle_s=0.0001)
    assert "host_sync" not in _kinds(findings(quiet))


def test_waits_name_the_functions_that_read_tensors_into_numbers(loaded):
    # The second blind round's data-dependent `if` in 12 blocks: 12 reads a step in the
    # block's forward. Where the reads are says what to change; it survives the JSON.
    places = (ReadPlace("me/model.py:61 forward", 12.0), ReadPlace("me/train.py:90 step", 1.0))
    capture = _with_real(
        loaded("gpt2"), busy_s=0.012, syncs_per_step=13.0, scalar_reads_per_step=13.0,
        sync_idle_s=0.006, read_places=places,
    )  # fmt: skip
    again = compilescope.Capture.from_json(capture.to_json())
    assert again.timings.real_steps.read_places == places
    (f,) = [f for f in findings(again) if f.kind == "host_sync"]
    assert "The reads are in `me/model.py:61 forward` (12 a step), `me/train.py:90 step`" in f.what
    more = tuple(ReadPlace(f"me/m.py:{i} f{i}", 1.0) for i in range(5))
    (g,) = [
        f for f in findings(_with_real(loaded("gpt2"), busy_s=0.012, syncs_per_step=5.0,
                                       scalar_reads_per_step=5.0, sync_idle_s=0.006,
                                       read_places=more))
        if f.kind == "host_sync"
    ]  # fmt: skip
    assert g.what.endswith("`me/m.py:2 f2` (1 a step) and 2 more functions.")


def _conv_capture(strides: str):
    from compilescope.model.compile import Compile
    from compilescope.model.compile_id import CompileId
    from compilescope.model.graph import Graph, Node, TensorMeta
    from compilescope.model.kernel import Kernel, OutputCode

    x = Node(
        "x",
        "placeholder",
        "x",
        tensors=(TensorMeta("bf16", ("8", "64", "32", "32"), strides, "cuda:0"),),
    )
    conv = Node(
        "convolution", "call_function", "torch.ops.aten.convolution.default", inputs=("x", "w")
    )
    graph = Graph("inductor_post_grad_graph", "", nodes=(x, conv))
    c = Compile(
        CompileId(frame_id=0, frame_compile_id=0),
        graphs={"inductor_post_grad_graph": (graph,)},
        output_code=(
            OutputCode(
                "", role="forward", kernels=(Kernel("extern_kernels.convolution", "extern"),)
            ),
        ),
    )
    timing = KernelTiming("0/0", "extern_kernels.convolution", _sample(0.006), 1.0)
    return _with_real(compilescope.Capture((c,)), kernels=(timing,), busy_s=STEP)


def test_nchw_convolutions_are_named_and_channels_last_ones_are_not():
    (f,) = [
        f
        for f in findings(_conv_capture(("65536", "1024", "32", "1")))
        if f.kind == "channels_last"
    ]
    assert "6.000 ms per step (30% of the step)" in f.what
    assert "channels_last" in f.fixes[0].change
    channels_last = _conv_capture(("65536", "1", "2048", "64"))
    assert "channels_last" not in _kinds(findings(channels_last))


def test_a_memory_saving_of_kilobytes_ranks_below_a_library_matmul_of_a_quarter_step():
    # Issue 31: "a memory budget of 0 saves 2.0 KiB" ranked above `mm` at 26% of the step.
    from compilescope.model.findings.parts import Cost, Finding
    from compilescope.model.findings.ranked import MEMORY_MATTERS_BYTES, score

    def memory(saved: int) -> Finding:
        return Finding("activation_memory", "", "m", cost=Cost(bytes=saved * 4, saved_bytes=saved))

    mm = Finding("fallback_op", "", "mm", cost=Cost(step_s=0.001, share=0.26))
    assert score(memory(2048)) < score(mm)
    assert score(memory(4 * MEMORY_MATTERS_BYTES)) > score(memory(2048))


def test_a_break_with_a_measured_cost_ranks_by_it_not_by_its_count():
    # Issue 31 item 4: by ms per step where measured. A GPT-2 loop: the logging break (3
    # breaks, 4 restarts) cost 8% of the step, its per-parameter AdamW 26%.
    from compilescope.model.findings.parts import Cost, Counts, Finding
    from compilescope.model.findings.ranked import score

    counts = Counts(breaks=3, restarts=4, partly_eager_frames=1)
    unmeasured = Finding("graph_break", "", "b", counts=counts, cost=Cost(compile_s=2.0))
    measured = Finding(
        "graph_break", "", "b", counts=counts, cost=Cost(compile_s=2.0, step_s=3e-4, share=0.08)
    )
    optimizer = Finding("eager_optimizer", "", "o", cost=Cost(step_s=1e-3, share=0.26))
    assert score(measured) < score(optimizer) < score(unmeasured)


def _library_matmuls(capture, device: str = "cuda:0", mm_s: float = 3e-4, addmm_s: float = 2e-4):
    """GPT-2's training compile timed on `device`: its library mm and addmm take
    mm_s + addmm_s of a 1 ms step."""
    from compilescope.model.measured.timing import GraphTiming

    def timed(name: str, seconds: float) -> KernelTiming:
        return KernelTiming("1/0_1", name, Sample(seconds, seconds, seconds, 5), 1.0)

    timings = Timings(
        device=device,
        graphs=(GraphTiming("1/0_1", "forward", compiled=_sample(1e-3)),),
        kernels=(timed("extern_kernels.mm", mm_s), timed("extern_kernels.addmm", addmm_s)),
    )
    return replace(capture, timings=timings)


def test_library_matmuls_dominating_a_gpu_step_offer_max_autotune_with_its_compile_cost(loaded):
    found = findings(_library_matmuls(loaded("gpt2")))
    (f,) = [f for f in found if f.kind == "library_matmul"]
    assert f.cost.share == pytest.approx(0.5) and f.cost.step_s == pytest.approx(5e-4)
    assert "`mm` 30%, `addmm` 20%" in f.what and "50% of the step (0.500 ms)" in f.what
    # What max-autotune will cost: the shapes it benchmarks once each, today's compile time.
    assert "each of the 12 distinct shapes" in f.what
    assert "these compiles took 20.2 s, backward included" in f.what
    (setting,) = f.fix.settings
    assert (setting.target, setting.op, setting.value) == (
        "torch._inductor.config.max_autotune_gemm", "set", True,
    )  # fmt: skip
    assert "longer compiles" in f.fix.tradeoff and "no sure win" in f.fix.tradeoff
    # Said once, together: no fallback_op finding per library matmul beside it on a GPU.
    assert not [g for g in found if g.kind == "fallback_op" and "mm`" in g.what]


def test_library_matmuls_say_nothing_of_max_autotune_where_it_cannot_apply_or_already_ran(loaded):
    gpt2 = loaded("gpt2")
    # Below the floor: 5% of the step.
    kinds = _kinds(findings(_library_matmuls(gpt2, mm_s=3e-5, addmm_s=2e-5)))
    assert "library_matmul" not in kinds
    # On a CPU: no Triton templates to race; each library call is a fallback_op, no fix.
    on_cpu = findings(_library_matmuls(gpt2, device="cpu"))
    assert "library_matmul" not in _kinds(on_cpu)
    mm = [f for f in on_cpu if f.kind == "fallback_op" and f.what.startswith("`mm`")]
    assert mm and not mm[0].fixes
    # The compile already ran with max-autotune for matmuls (its logged Inductor config): the
    # library won the race, nothing more to try.
    c = gpt2["1/0_1"]
    tuned = replace(c, metrics={**c.metrics, "inductor_config": '{"max_autotune_gemm": true}'})
    capture = replace(gpt2, compiles=tuple(tuned if x is c else x for x in gpt2))
    assert "library_matmul" not in _kinds(findings(_library_matmuls(capture)))


def test_convolutions_with_cudnns_auto_tuner_off_name_it_above_the_library_fallback():
    # The second blind round's conv net: cudnn.benchmark off, convolutions 58% of the step,
    # answered with fp32 matmuls, compile time and "cuDNN on purpose" (the auto-tuner unnamed).
    conv = _conv_capture(("65536", "1", "2048", "64"))  # channels-last: only the tuner to say
    off = replace(conv.timings.real_steps, settings=StepSettings(cudnn_benchmark=False))
    capture = replace(conv, timings=replace(conv.timings, real_steps=off))
    found = findings(capture)
    (f,) = [f for f in found if f.kind == "cudnn_benchmark"]
    assert "6.000 ms per step (30% of the step)" in f.what
    assert f.fixes[0].python() == "torch.backends.cudnn.benchmark = True"
    assert "new input shape" in f.fixes[0].tradeoff
    assert found[0].kind == "cudnn_benchmark"
    # On, or not recorded (a capture made before the setting was read): no finding.
    for settings in (StepSettings(cudnn_benchmark=True), StepSettings(), None):
        on = replace(off, settings=settings)
        assert "cudnn_benchmark" not in _kinds(
            findings(replace(conv, timings=replace(conv.timings, real_steps=on)))
        )
    again = compilescope.Capture.from_json(capture.to_json())
    assert again.timings.real_steps.settings.cudnn_benchmark is False


def test_convolutions_with_cudnn_turned_off_say_so_first_and_not_the_tuner_or_the_layout():
    # The fourth blind round's ResNet-18 with `cudnn.enabled = False` left in (5.73x with it on,
    # H200): answered with the verdict, launch-bound, the auto-tuner and channels-last.
    conv = _conv_capture(("65536", "4096", "64", "1"))  # NCHW: the layout would be said too
    real = replace(conv.timings.real_steps, busy_s=0.008,
                   settings=StepSettings(cudnn_benchmark=False, cudnn_enabled=False))  # fmt: skip
    found = findings(replace(conv, timings=replace(conv.timings, real_steps=real)))
    assert found[0].kind == "cudnn_disabled"
    assert (
        "cuDNN is turned off" in found[0].what
        and "6.000 ms per step (30% of the step)" in found[0].what
    )
    assert found[0].fixes[0].python() == "torch.backends.cudnn.enabled = True"
    assert not {"cudnn_benchmark", "channels_last"} & set(_kinds(found))
    # On: the tuner and the layout as before, and no word of it.
    on = replace(real, settings=StepSettings(cudnn_benchmark=False, cudnn_enabled=True))
    kinds = _kinds(findings(replace(conv, timings=replace(conv.timings, real_steps=on))))
    assert "cudnn_disabled" not in kinds and "cudnn_benchmark" in kinds
    again = compilescope.Capture.from_json(
        replace(conv, timings=replace(conv.timings, real_steps=real)).to_json()
    )
    assert again.timings.real_steps.settings.cudnn_enabled is False


def test_a_debugging_setting_left_on_is_said_first_with_its_waits(loaded):
    # The third blind round's ResNet-18 trained with anomaly detection on (1.84x without it,
    # H200): its 66 NaN checks a step read as host syncs in `step`, under launch-bound.
    settings = StepSettings(anomaly_detection=True)
    capture = _with_real(
        loaded("gpt2"), busy_s=0.004, settings=settings, syncs_per_step=66.0,
        scalar_reads_per_step=65.0, sync_idle_s=0.003,
    )  # fmt: skip
    found = findings(capture)
    first = next(f for f in found if f.kind not in ("compiled_slower", "compiled_not_faster"))
    assert first.kind == "debug_mode"
    assert "anomaly detection" in first.what and "set_detect_anomaly(True)" in first.what
    assert "Its waits: The CPU waits for the GPU 66 times per step" in first.what
    assert "host_sync" not in _kinds(found)  # one cause, one finding
    assert "set_detect_anomaly" in first.fixes[0].change
    assert first.fixes[0].title == "turn debugging APIs off for training"
    blocking = _with_real(loaded("gpt2"), busy_s=0.004,
                          settings=StepSettings(launch_blocking=True))  # fmt: skip
    (b,) = [f for f in findings(blocking) if f.kind == "debug_mode"]
    assert "CUDA_LAUNCH_BLOCKING=1" in b.what and "anomaly" not in b.what
    # Off, or not read: nothing said; the syncs are their own finding again.
    for off in (StepSettings(), None):
        quiet = _with_real(loaded("gpt2"), busy_s=0.004, settings=off, syncs_per_step=66.0,
                           scalar_reads_per_step=65.0, sync_idle_s=0.003)  # fmt: skip
        kinds = _kinds(findings(quiet))
        assert "debug_mode" not in kinds and "host_sync" in kinds


def test_a_profiler_left_recording_is_a_debugging_setting(loaded):
    capture = _with_real(loaded("gpt2"), busy_s=0.004, settings=StepSettings(profiler=True))
    (found,) = [f for f in findings(capture) if f.kind == "debug_mode"]
    assert "a profiler recording every op" in found.what and "anomaly" not in found.what
    assert "torch.profiler.profile" in found.fixes[0].change


def test_deterministic_algorithms_on_a_gpu_are_said_after_the_verdict_with_their_setting(loaded):
    # Said whatever the share (their cost is spread over many ops, not measured apart).
    capture = _with_real(loaded("gpt2"), busy_s=0.019, settings=StepSettings(deterministic=True))
    found = findings(capture)
    first = next(f for f in found if f.kind not in ("compiled_slower", "compiled_not_faster"))
    assert first.kind == "deterministic_algorithms"
    assert "use_deterministic_algorithms(True)" in first.what
    assert first.fixes[0].python() == "torch.backends.cudnn.deterministic = False"
    assert "last bits" in first.fixes[0].tradeoff  # what it trades, said with the fix
    # Off, not read, or a CPU step: no word of it.
    for settings, device in ((StepSettings(deterministic=False), "cuda:0"), (None, "cuda:0"),
                             (StepSettings(deterministic=True), "cpu")):  # fmt: skip
        quiet = _with_real(loaded("gpt2"), busy_s=0.019, settings=settings, device=device)
        assert "deterministic_algorithms" not in _kinds(findings(quiet))
    again = compilescope.Capture.from_json(capture.to_json())
    assert again.timings.real_steps.settings.deterministic is True


def test_attention_with_its_fused_backends_off_is_said_where_a_graph_calls_sdpa(loaded):
    # The gpt2 fixture's graph 1/0_1 calls scaled_dot_product_attention twice; module_backward's
    # graph calls none.
    settings = StepSettings(sdpa_math_only=True)
    found = findings(_with_real(loaded("gpt2"), busy_s=0.019, settings=settings))
    (sdpa,) = [f for f in found if f.kind == "sdpa_math_only"]
    assert sdpa.compile_ids == ("1/0_1",) and "every fused attention backend" in sdpa.what
    assert "enable_flash_sdp(False)" in sdpa.fixes[0].change
    no_attention = _with_real(loaded("module_backward"), busy_s=0.019, settings=settings)
    assert "sdpa_math_only" not in _kinds(findings(no_attention))
    fused_on = _with_real(loaded("gpt2"), busy_s=0.019, settings=StepSettings(sdpa_math_only=False))
    assert "sdpa_math_only" not in _kinds(findings(fused_on))


def test_tensors_made_on_the_host_and_copied_are_named_and_taken_from_idle_time(loaded):
    # The third blind round's diffusion noise, `torch.randn(shape).to(dev)` every step (4.5x
    # made on the GPU): it read as launch-bound (193 us of idle a launch) in one run and
    # host-bound (224 us) in the next, neither naming where the host's time went.
    kernels = tuple(
        KernelTiming("0/0", f"triton_poi_{i}", _sample(5e-6), 1.0, role="forward")
        for i in range(100)
    )
    drawn = (
        HostTime("me/train.py:86 step", 0.011, (HostOp("aten::randn", 0.010), HostOp("aten::add", 1e-3))),
    )  # fmt: skip
    copy = OutsideWork("copy", "host-to-device copy (pageable)", 0.001, 1.0)
    profiled = _sample(0.020)
    made = _with_real(
        loaded("gpt2"), busy_s=0.003, kernels=kernels, outside=(copy,), host_time=drawn,
        split_wall=profiled,
    )  # fmt: skip
    made = compilescope.Capture.from_json(made.to_json())
    found = findings(made)
    (m,) = [f for f in found if f.kind == "host_tensors"]
    assert "(`aten::randn` in `me/train.py:86 step`): 50% of the profiled steps' time" in m.what
    assert "copies 1 tensor a step to the GPU" in m.what
    assert m.fixes[0].title == "create tensors directly on the device"
    assert "device=x.device" in m.fixes[0].change
    # Its 10 ms are the GPU's idle time too: launch-bound keeps the other 7 (35%), below it.
    (lb,) = [f for f in found if f.kind == "launch_bound"]
    assert abs(lb.cost.step_s - 0.007) < 1e-9
    assert _kinds(found).index("host_tensors") < _kinds(found).index("launch_bound")
    # No copy to the device: making tensors on the host is the host's own business.
    kept = _with_real(loaded("gpt2"), busy_s=0.004, kernels=kernels, host_time=drawn,
                      split_wall=profiled)  # fmt: skip
    assert "host_tensors" not in _kinds(findings(kept))
