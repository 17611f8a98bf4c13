"""The compile-time budget: one figure of compile time everywhere, its parts, cold or warm, the remedies and the pay-back."""

from __future__ import annotations

import re
from dataclasses import replace

import compilescope
import pytest
from compilescope.model.capture import Capture
from compilescope.model.compile import CacheEvent, Compile, StageTime, compile_seconds
from compilescope.model.compile_id import CompileId
from compilescope.model.diff import diff
from compilescope.model.findings.compile_time import compile_time_findings, repeated_blocks
from compilescope.model.graph import Graph
from compilescope.model.measured.compile_budget import KERNEL_COMPILE, compile_budget, work_of
from compilescope.model.measured.compile_payback import PayBack, pay_back
from compilescope.model.measured.timing import RealSteps, Sample, Timings
from compilescope.views.view_data import capture_data


def _compile(cid: str, stages: list[tuple[str, float, float, int]], **kw) -> Compile:
    return Compile(
        id=CompileId.parse(cid),
        stage_times=tuple(StageTime(n, s * 1e6, d * 1e6, depth) for n, s, d, depth in stages),
        **kw,
    )


COLD = [
    ("entire_frame_compile", 0.0, 10.0, 0),
    ("bytecode_tracing", 0.0, 1.0, 1),
    ("compile_fx", 1.0, 9.0, 1),
    ("Scheduler.codegen", 1.5, 2.0, 2),
    ("async_compile.wait", 4.0, 5.0, 2),
]


def _sample(seconds: float) -> Sample:
    return Sample(seconds, seconds, seconds, 10)


def _with_steps(capture: Capture, compiled: float, eager: float) -> Capture:
    real = RealSteps(device="cpu", compiled=_sample(compiled), eager=_sample(eager))
    return replace(capture, timings=Timings(real_steps=real))


@pytest.mark.parametrize("name", ["gpt2", "module_backward", "recompile", "small_resnet"])
def test_each_compiles_parts_add_up_to_its_figure(loaded, name):
    budget = compile_budget(loaded(name))
    for c in budget.compiles:
        assert sum(s for _, s in c.works) == pytest.approx(c.seconds, rel=1e-6, abs=1e-6)
        assert all(s >= 0 for _, s in c.works)
    assert budget.seconds == pytest.approx(sum(s for _, s in budget.works), rel=1e-6)


def test_a_restart_is_counted_once(loaded):
    capture = loaded("gpt2")
    budget = compile_budget(capture)
    restarts = [c for c in budget.compiles if c.counted_in]
    assert {c.compile_id for c in restarts} >= {"0/0_1", "1/0_1"}
    assert all(c.seconds == 0 for c in restarts)
    # torch logs the frame's metrics under the restart: a naive sum would count it twice.
    naive = sum(c.compile_time_s or 0 for c in capture)
    assert budget.seconds < naive
    assert compile_seconds(capture.compiles) == pytest.approx(budget.seconds)


def test_one_figure_in_the_table_the_finding_the_summary_and_the_view(loaded):
    capture = loaded("module_backward")
    figure = compile_budget(capture).seconds
    table = compilescope.tables.compile_budget(capture)
    total = [r for r in table if r["compile_id"] is None and r["work"].startswith("compile time")]
    assert total[0]["seconds"] == pytest.approx(figure)
    (f,) = compile_time_findings(capture)
    assert f.what.startswith(f"Compile time {figure:.1f} s")
    assert f"compile time {figure:.2f} s" in str(capture)
    data = capture_data(capture)
    assert data["compile_line"].startswith(f"compile time {figure:.2f} s")
    assert sum(c["compile_s"] or 0 for c in data["compiles"]) == pytest.approx(figure)


def test_stages_are_named_by_kind_of_work():
    assert work_of("async_compile.wait") == KERNEL_COMPILE
    assert work_of("compile_file") == KERNEL_COMPILE
    assert work_of("Scheduler.codegen") == "Inductor fusion and code generation"
    assert work_of("bytecode_tracing") == "Dynamo tracing and guards"
    assert work_of("min_cut_rematerialization_partition") == "AOTAutograd tracing and partitioning"
    assert work_of("CachingAutotuner.benchmark_all_configs") == "autotuning"
    assert work_of("something_new_in_torch") == "other compile work"


def test_cold_and_warm_are_said():
    cold = Capture(
        compiles=(_compile("0/0", COLD, cache_events=(CacheEvent("fx_graph_cache", "miss"),)),)
    )
    warm = Capture(
        compiles=(
            _compile(
                "0/0",
                [("entire_frame_compile", 0.0, 0.8, 0)],
                cache_events=(CacheEvent("fx_graph_cache", "hit"),) * 2,
                metrics={"remote_cache_time_saved_s": 9.2},
            ),
        ),
        caches="user",
    )
    assert compile_budget(cold).label == "cold: torch's caches missed"
    assert compile_budget(replace(cold, caches="fresh")).label.startswith("cold: compiled with")
    # A fresh capture compiled cold on purpose: the cache is no change for the user to make.
    (f,) = compile_time_findings(replace(cold, caches="fresh"))
    assert [x.title for x in f.fixes] == ["nothing to change", "reuse torch's compile caches"]
    assert "your own runs reuse torch's caches" in f.fixes[0].change
    assert compile_budget(warm).label == "warm: 1 of 1 compiles from torch's cache, 9.2 s saved"
    # Each number in the diff says what it is.
    text = diff(cold, warm).summary()
    assert "compile time 10.00 s (cold: torch's caches missed) -> 0.80 s (warm: 1 of 1" in text
    assert "0/0 compile time 10.00 s (cold) -> 0.80 s (warm)" in text
    # A warm compile has nothing the cache could still save: no finding below a second.
    assert compile_time_findings(warm) == []


def test_a_cold_start_of_the_users_own_run_gets_the_cache_remedy():
    missed = (CacheEvent("fx_graph_cache", "miss"),)
    capture = Capture(compiles=(_compile("0/0", COLD, cache_events=missed),), caches="user")
    (f,) = compile_time_findings(capture)
    assert f.what.startswith("Compile time 10.0 s (cold: torch's caches missed)")
    assert f"{KERNEL_COMPILE} 5.0 s (50%)" in f.what
    assert [x.title for x in f.fixes] == ["reuse torch's compile caches"]
    assert "save_cache_artifacts" in f.fixes[0].change


def _graph_of_blocks(container: str, n: int, widths: list[int] | None = None) -> Graph:
    prefix = "L_self_modules_" + "_modules_".join(container.split(".")) if container else "L_self"
    widths = widths or [4] * n
    inputs = [
        f'{prefix}_modules_{i}_modules_fc_parameters_weight_: "f32[{w}, 4][4, 1]cpu"'
        for i, w in enumerate(widths)
    ]
    return Graph("dynamo_output_graph", "def forward(self, " + ", ".join(inputs) + "):\n")


@pytest.mark.parametrize("container", ["transformer.h", "layers", ""])
def test_repeated_blocks_call_for_regional_compilation(container):
    graphs = {"dynamo_output_graph": (_graph_of_blocks(container, 12),)}
    capture = Capture(compiles=(_compile("0/0", COLD, graphs=graphs),))
    found = repeated_blocks(capture)
    assert found is not None and (found.container, found.blocks, found.distinct) == (
        container,
        12,
        1,
    )
    (f,) = compile_time_findings(capture)
    regional = f.fixes[0]
    assert regional.title.startswith("compile the repeated block")
    path = f"model.{container}" if container else "model"
    assert f"for block in {path}: block.compile()" in regional.change
    assert f"holds 12 blocks of `{path}`, all alike" in regional.change
    # Two blocks are not worth it; the cache still is.
    two = {"dynamo_output_graph": (_graph_of_blocks(container, 2),)}
    capture = Capture(compiles=(_compile("0/0", COLD, graphs=two),))
    assert repeated_blocks(capture) is None
    assert [x.title for x in compile_time_findings(capture)[0].fixes] == [
        "reuse torch's compile caches"
    ]
    # Blocks that differ in shape compile once per shape: six of six widths is no repetition,
    # sixteen of eight shapes (a ResNet-50) measured slower by blocks.
    graphs = {"dynamo_output_graph": (_graph_of_blocks(container, 6, [8, 16, 32, 64, 96, 128]),)}
    assert repeated_blocks(Capture(compiles=(_compile("0/0", COLD, graphs=graphs),))) is None
    widths = [w for w in range(8, 72, 8) for _ in range(2)]
    graphs = {"dynamo_output_graph": (_graph_of_blocks(container, 16, widths),)}
    assert repeated_blocks(Capture(compiles=(_compile("0/0", COLD, graphs=graphs),))) is None


def test_an_unrolled_loop_and_max_autotune_get_their_remedies():
    weight = "L_self_modules_cell_parameters_weight_"
    text = f'def forward(self, L_x_: "f32[4, 4]", {weight}: "f32[4, 4][4, 1]cpu"):\n'
    text += "".join(
        f"    mm_{i} = torch.mm(x_{i}, l_self_modules_cell_parameters_weight_)\n" for i in range(24)
    )
    config = '{"max_autotune": true, "freezing": true}'
    capture = Capture(
        compiles=(
            _compile("0/0", COLD, graphs={"dynamo_output_graph": (Graph("dynamo_output_graph", text),)},
                     metrics={"inductor_config": config}),
        ),
        caches="fresh",
    )  # fmt: skip
    (f,) = compile_time_findings(capture)
    assert [x.title for x in f.fixes] == [
        "compile the loop's body once, not the unrolled loop",
        "autotune less",
        "reuse torch's compile caches",
    ]
    assert "compile `cell` on its own" in f.fixes[0].change and "24 times" in f.fixes[0].change
    assert "nested_compile_region" in f.fixes[0].change


def test_recompiles_and_autotuning_get_their_remedies_and_nothing_else_says_so():
    tuned = [
        ("entire_frame_compile", 0.0, 4.0, 0),
        ("CachingAutotuner.benchmark_all_configs", 0.0, 2.0, 1),
    ]
    capture = Capture(
        compiles=(
            _compile("0/0", tuned, cache_events=(CacheEvent("fx_graph_cache", "hit"),)),
            _compile("0/1", [("entire_frame_compile", 5.0, 2.0, 0)]),
        )
    )
    (f,) = compile_time_findings(capture)
    assert [x.title for x in f.fixes] == ["autotune less", "remove the recompiles"]
    assert "2.0 s of it in recompiles" in f.what
    plain = [("entire_frame_compile", 0.0, 3.0, 0), ("bytecode_tracing", 0.0, 3.0, 1)]
    capture = Capture(
        compiles=(_compile("0/0", plain, cache_events=(CacheEvent("fx_graph_cache", "hit"),)),)
    )
    (f,) = compile_time_findings(capture)
    assert [x.title for x in f.fixes] == ["nothing to change"]


def test_pay_back_from_the_loops_own_steps():
    capture = _with_steps(Capture(compiles=(_compile("0/0", COLD),)), compiled=0.001, eager=0.002)
    paid = pay_back(capture)
    assert paid is not None and paid.unit == "step"
    assert paid.steps == pytest.approx(10_000)
    sentence = paid.sentence()
    assert sentence.startswith("Compiling pays back after 10,001 steps: compiling took 10.0 s")
    assert "1.000 ms saved per step" in sentence
    (f,) = compile_time_findings(capture)
    assert sentence in f.what
    slower = _with_steps(capture, compiled=0.003, eager=0.002)
    paid = pay_back(slower)
    assert paid is not None and paid.steps is None
    assert paid.sentence().startswith("Compiling does not pay back")


def test_pay_back_is_none_without_an_eager_time():
    capture = Capture(compiles=(_compile("0/0", COLD),))
    assert pay_back(capture) is None
    real = RealSteps(device="cpu", compiled=_sample(0.001))
    assert pay_back(replace(capture, timings=Timings(real_steps=real))) is None
    assert PayBack(1.0, 0.0, "call", 0.1, 0.1).steps is None


def test_the_compile_line_in_the_script_free_html(loaded):
    capture = loaded("module_backward")
    html = compilescope.to_html(capture)
    line = re.search(r"data-compile-time=''>([^<]*)<", html)
    assert line is not None and line.group(1).startswith("compile time ")


def test_kernels_compiled_on_one_thread_get_parallel_compiles():
    serial = {"inductor_config": '{"compile_threads": 1, "max_autotune": false}'}
    missed = (CacheEvent("fx_graph_cache", "miss"),)
    capture = Capture(
        compiles=(_compile("0/0", COLD, metrics=serial, cache_events=missed),), caches="user"
    )
    (f,) = compile_time_findings(capture)
    assert [x.title for x in f.fixes] == [
        "compile kernels in parallel",
        "reuse torch's compile caches",
    ]
    assert "TORCHINDUCTOR_COMPILE_THREADS" in f.fixes[0].change
    # Two threads (this machine's cores): nothing to say about it.
    parallel = {"inductor_config": '{"compile_threads": 2}'}
    capture = Capture(
        compiles=(_compile("0/0", COLD, metrics=parallel, cache_events=missed),), caches="user"
    )
    assert "compile kernels in parallel" not in [
        x.title for x in compile_time_findings(capture)[0].fixes
    ]


def test_dynamic_true_from_the_first_call_gets_the_default_first():
    # The second compile-time blind round's CNN compiled with dynamic=True on shapes that never
    # change: "nothing to change" (47 -> 25 s compiling with the default).
    from compilescope.model.compile import Symbol

    sym = (Symbol("s0", "L['x'].size()[0]", "8", "[2, int_oo]"),)
    dynamic = '{"assume_static_by_default": false, "automatic_dynamic_shapes": true}'
    capture = Capture(compiles=(_compile("0/0", COLD, symbols=sym,
                                         metrics={"dynamo_config": dynamic}),), caches="fresh")  # fmt: skip
    (f,) = compile_time_findings(capture)
    assert f.fixes[0].title == "compile with the default dynamic=None"
    assert "mark_dynamic(x, dim)" in f.fixes[0].change
    # The default (static first), or dynamic=True without a symbol (nothing sized): not said.
    static = dynamic.replace("false", "true", 1)
    for c in (_compile("0/0", COLD, symbols=sym, metrics={"dynamo_config": static}),
              _compile("0/0", COLD, metrics={"dynamo_config": dynamic})):  # fmt: skip
        (g,) = compile_time_findings(Capture(compiles=(c,), caches="fresh"))
        assert "compile with the default dynamic=None" not in [x.title for x in g.fixes]


def test_a_second_of_max_autotunes_benchmarking_calls_for_autotuning_less():
    """torch 2.11 logs no max_autotune in the config of `mode="max-autotune"`, and its GEMM
    autotuning was 19% of the compile (10.8 s): torch times it only in that mode's options."""
    plain = [("entire_frame_compile", 0.0, 57.0, 0), ("bytecode_tracing", 0.0, 57.0, 1)]
    tuned = {"compile_time_autotune_time_us": 10.8e6, "inductor_config": '{"max_autotune": false}'}
    capture = Capture(compiles=(_compile("0/0", plain, metrics=tuned),), caches="fresh")
    (f,) = compile_time_findings(capture)
    assert f.fixes[0].title == "autotune less"
    assert "(autotuning took 10.8 s of the compile)" in f.fixes[0].change
    untuned = {"compile_time_autotune_time_us": 0.2e6}
    capture = Capture(compiles=(_compile("0/0", plain, metrics=untuned),), caches="fresh")
    assert "autotune less" not in [x.title for x in compile_time_findings(capture)[0].fixes]
