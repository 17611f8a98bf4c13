"""The step budget (named parts that add up to the step) and the verdict finding, on real-step
figures written out (no torch): what the split measured, what the budget and findings say."""

from __future__ import annotations

from pathlib import Path

import pytest
from compilescope import tables
from compilescope.model.capture import Capture
from compilescope.model.findings.ranked import findings
from compilescope.model.measured.step_budget import step_budget
from compilescope.model.measured.timing import GraphShare, OptimizerSeen, RealSteps, Sample, Timings


def sample(median: float, spread: float = 0.02, n: int = 10) -> Sample:
    return Sample(median, median * (1 - spread), median * (1 + spread), n)


def real(**kw) -> RealSteps:
    base = dict(
        device="cpu",
        compiled=sample(0.010),
        graphs=(
            GraphShare("0/0", "forward", 0.003, 4),
            GraphShare("0/0", "backward", 0.004, 6),
        ),
        outside_graphs_s=0.002,
        between_s=0.001,
    )
    base.update(kw)
    return RealSteps(**base)


def capture_of(r: RealSteps) -> Capture:
    return Capture(timings=Timings(device=r.device, real_steps=r))


def test_the_budget_adds_up_to_the_step_with_no_negative_part():
    parts = step_budget(real(optimizer_s=0.0015))
    assert sum(p.seconds for p in parts) == pytest.approx(0.010)
    assert all(p.seconds >= 0 for p in parts)
    names = [p.kind for p in parts]
    assert names == ["graph", "graph", "optimizer", "outside", "gaps"]  # largest graph first
    assert parts[0].compile_id == "0/0" and "backward" in parts[0].name
    optimizer = next(p for p in parts if p.kind == "optimizer")
    assert optimizer.seconds == pytest.approx(0.0015) and optimizer.share == pytest.approx(0.15)
    # the optimizer's time came out of what ran outside the graphs, not on top of it
    assert next(p for p in parts if p.kind == "outside").seconds == pytest.approx(0.0005)


def test_an_optimizer_longer_than_the_outside_time_takes_the_rest_from_the_gaps():
    parts = {p.kind: p for p in step_budget(real(optimizer_s=0.0025))}
    assert "outside" not in parts and parts["optimizer"].seconds == pytest.approx(0.0025)
    assert parts["gaps"].seconds == pytest.approx(0.0005)


def test_parts_measured_over_the_step_show_as_negative_unexplained_never_hidden():
    # The DDP loop of issue 42: graphs + outside exceeded the stopwatch's step.
    parts = step_budget(real(outside_graphs_s=0.008, between_s=-0.005))
    rest = [p for p in parts if p.kind == "unexplained"]
    assert len(rest) == 1 and rest[0].seconds == pytest.approx(-0.005)
    assert "more than the stopwatch's step" in rest[0].detail
    assert all(p.seconds >= 0 for p in parts if p.kind != "unexplained")
    assert sum(p.seconds for p in parts) == pytest.approx(0.010)


def test_a_gpu_step_names_the_idle_time_after_syncs():
    r = real(
        device="cuda", between_s=0.003, outside_graphs_s=0.0, sync_idle_s=0.002, syncs_per_step=3.0
    )
    parts = {p.kind: p for p in step_budget(r)}
    assert parts["sync"].seconds == pytest.approx(0.002) and "3 syncs" in parts["sync"].detail
    assert parts["gaps"].seconds == pytest.approx(0.001) and "launch" in parts["gaps"].name


def test_a_step_timed_whole_is_all_unexplained_and_says_why():
    (part,) = step_budget(real(graphs=(), outside_graphs_s=0.0, between_s=0.0))
    assert part.kind == "unexplained" and part.share == pytest.approx(1.0)
    assert "timed whole" in part.detail


def test_the_table_has_the_parts_and_the_step():
    table = tables.step_budget(capture_of(real()))
    assert table.columns == ("part", "kind", "compile_id", "seconds", "share", "detail")
    *parts, step = table
    assert step["kind"] == "step" and step["seconds"] == pytest.approx(0.010)
    assert sum(r["seconds"] for r in parts) == pytest.approx(step["seconds"])
    assert tables.step_budget(Capture()) == []


def test_a_compiled_step_slower_than_eager_is_finding_one_with_both_numbers():
    r = real(
        compiled=sample(0.0017),
        eager=sample(0.0012),
        graphs=(GraphShare("0/0", "forward", 0.0002, 2),),
        outside_graphs_s=0.0013,
        between_s=0.0002,
        optimizers=(OptimizerSeen("SGD", 4, foreach=None, fused=False, eager=True),),
        optimizer_s=0.0010,
    )
    found = findings(capture_of(r))
    first = found[0]
    assert first.kind == "compiled_slower", [f.kind for f in found]
    assert "1.700 ms compiled against 1.200 ms eager (0.71x" in first.what
    assert "0.500 ms lost per step" in first.what
    assert "optimizer steps (eager) 1.000 ms (59%)" in first.what  # the largest part, named
    assert first.fix is not None and "eager" in first.fix.title


@pytest.mark.parametrize(
    ("compiled", "eager", "verdict"),
    [
        (0.0010, 0.0012, None),  # faster by more than the noise: no verdict
        (0.00121, 0.0012, "compiled_not_faster"),  # slower only within the noise
        (0.00118, 0.0012, "compiled_not_faster"),  # faster, but by less than 5%
    ],
    ids=["faster", "slower-within-noise", "faster-within-noise"],
)
def test_a_step_not_clearly_slower_is_said_not_faster_unless_compiling_pays(
    compiled, eager, verdict
):
    found = findings(capture_of(real(compiled=sample(compiled), eager=sample(eager))))
    kinds = [f.kind for f in found]
    assert "compiled_slower" not in kinds
    if verdict is None:
        assert "compiled_not_faster" not in kinds
    else:
        assert kinds[0] == verdict and "is not faster than eager" in found[0].what
        assert f"{compiled * 1e3:.3f} ms compiled against 1.200 ms eager" in found[0].what


def test_slower_medians_with_noisy_steps_are_not_faster_with_the_pairs_said():
    # ResNet-50 on an H100 (issue 42's run): 27.5 ms compiled against 24.5 ms eager by the
    # medians, but the window's first steps ran at 16 ms: too few pairs agree for "slower".
    walls = (0.0161, 0.0169, 0.0246, 0.0252, 0.0282, 0.0299, 0.0268, 0.0278, 0.0230, 0.0225)
    eager_walls = (0.0243, 0.0223, 0.0251, 0.0241, 0.0260)
    r = real(
        compiled=sample(0.0275), eager=sample(0.0245), step_walls=walls, eager_walls=eager_walls
    )
    first = findings(capture_of(r))[0]
    assert first.kind == "compiled_not_faster"
    assert "27.500 ms compiled against 24.500 ms eager (0.89x" in first.what
    assert "29 of 50 pairs of steps had the compiled one slower" in first.what


def test_the_verdict_survives_a_round_trip_through_json():
    r = real(compiled=sample(0.0017), eager=sample(0.0012))
    cap = Capture.from_json(capture_of(r).to_json())
    assert findings(cap)[0].kind == "compiled_slower"


def gpu_real(**kw) -> RealSteps:
    from compilescope.model.measured.timing import OutsideWork

    base = dict(
        device="cuda",
        compiled=sample(0.025),
        graphs=(GraphShare("0/0", "forward", 0.002, 8), GraphShare("0/0", "backward", 0.003, 12)),
        outside_graphs_s=0.018,
        between_s=0.002,
        outside=(
            OutsideWork("copy", "host-to-device copy (pageable)", 0.017, 2.0),
            OutsideWork("eager_op", "aten::_foreach_add_", 0.0008, 1.0),
        ),
        optimizer_s=0.001,
    )
    base.update(kw)
    return RealSteps(**base)


def test_a_gpu_budget_names_what_ran_outside_the_graphs():
    parts = step_budget(gpu_real())
    assert sum(p.seconds for p in parts) == pytest.approx(0.025)
    assert all(p.seconds >= 0 for p in parts)
    names = [p.name for p in parts]
    assert names[:2] == ["compiled graph 0/0 (backward)", "compiled graph 0/0 (forward)"]
    assert "host-to-device copy (pageable)" in names
    # the optimizer's ops are one part, named among the works, not counted a second time
    assert "optimizer update (_foreach_add_), eager" in names
    assert "optimizer steps (eager)" not in names
    copy = next(p for p in parts if "pageable" in p.name)
    assert copy.share == pytest.approx(0.68) and "host waits" in copy.detail


def test_pageable_copies_are_the_top_finding_with_pinned_memory_first():
    found = findings(capture_of(gpu_real()))
    first = found[0]
    assert first.kind == "host_copies" and "pageable" in first.what
    assert "68%" in first.what
    assert "pin_memory" in first.fix.change and "non_blocking=True" in first.fix.change
    assert "2.7x" in first.fix.tradeoff  # what we measured, from the catalog
    assert "data on the device" in first.fixes[1].title or "keep the data" in first.fixes[1].title


def test_an_exposed_collective_is_a_finding_and_its_overlapped_part_is_not_counted():
    from compilescope.model.measured.timing import OutsideWork

    r = gpu_real(
        outside=(OutsideWork("collective", "ncclDevKernel_AllReduce", 0.004, 3.0, 0.006),),
        outside_graphs_s=0.004,
        between_s=0.016,
    )
    parts = {p.kind: p for p in step_budget(r)}
    assert parts["collective"].seconds == pytest.approx(0.004)
    assert "6.000 ms more overlapped" in parts["collective"].detail
    kinds = [f.kind for f in findings(capture_of(r))]
    assert "exposed_collectives" in kinds


def test_unplaced_time_over_ten_percent_is_a_finding_that_says_no_remedy_is_known():
    r = real(outside_graphs_s=0.0, between_s=0.0, compiled=sample(0.010))  # 3 ms unplaced
    f = next(f for f in findings(capture_of(r)) if f.kind == "unplaced_time")
    assert "30%" in f.what and "no remedy is known" in f.what
    assert f.fix is not None and "torch.profiler" in f.fix.change


def test_the_catalog_is_data_with_a_source_for_every_remedy():
    from compilescope.model.findings.catalog import REMEDIES, remedy

    assert len(REMEDIES) >= 8
    for r in REMEDIES.values():
        assert r.title and r.signature and r.change and r.source, r.key
    with pytest.raises(KeyError, match="known:"):
        remedy("no_such_remedy")


def test_device_parts_past_the_step_are_scaled_to_it_and_say_so():
    # The fp32 loop of the blind set on an H100: the split's kernels took 35.6 ms a step, the
    # stopwatch's step 32.6 ms; the budget is in the stopwatch's step, nothing negative.
    r = gpu_real(
        compiled=sample(0.0326),
        graphs=(
            GraphShare("0/0", "backward", 0.0241, 40),
            GraphShare("0/0", "forward", 0.0116, 30),
        ),
        outside=(),
        outside_graphs_s=0.0,
        between_s=-0.0031,
    )
    parts = step_budget(r)
    assert all(p.seconds >= 0 for p in parts) and "unexplained" not in [p.kind for p in parts]
    assert sum(p.seconds for p in parts) == pytest.approx(0.0326)
    assert "scaled by 0.913" in parts[0].detail and "35.700 ms" in parts[0].detail


def test_small_eager_ops_are_one_part():
    from compilescope.model.measured.timing import OutsideWork

    tiny = tuple(OutsideWork("eager_op", f"aten::op{i}", 0.00001, 1.0) for i in range(6))
    parts = step_budget(gpu_real(outside=tiny, outside_graphs_s=0.0001, between_s=0.0199))
    (grouped,) = [p for p in parts if "small eager ops" in p.name]
    assert grouped.name.startswith(
        "6 small eager ops (aten::op0, aten::op1, aten::op2, aten::op3, ..."
    )
    assert grouped.seconds == pytest.approx(0.00006)


def test_eager_ops_left_by_a_frame_past_the_recompile_limit_are_that_findings_cost():
    from compilescope.model.findings.parts import Finding
    from compilescope.model.findings.root_cause import eager_ops_to_their_cause

    limit = Finding(kind="recompile_limit", what="`forward` hit the recompile limit (8).", key="l")
    ops = [
        Finding(kind="eager_ops_outside", what="", key="eager_ops_outside:aten::mm",
                cost=replace_cost(0.004, 0.17)),
        Finding(kind="eager_ops_outside", what="", key="eager_ops_outside:aten::addmm",
                cost=replace_cost(0.003, 0.13)),
    ]  # fmt: skip
    (merged,) = eager_ops_to_their_cause([limit, *ops])
    assert merged.kind == "recompile_limit" and merged.cost.share == pytest.approx(0.30)
    assert "(aten::mm, aten::addmm) take 7.000 ms per step (30%)" in merged.what


def replace_cost(step_s, share):
    from compilescope.model.findings.parts import Cost

    return Cost(step_s=step_s, share=share)


def test_a_loop_with_nothing_compiled_is_told_to_compile():
    r = RealSteps(device="cuda", compiled=sample(0.017))
    (f,) = findings(capture_of(r))
    assert f.kind == "not_compiled" and "17.000 ms" in f.what
    assert "torch.compile" in f.fix.change


def test_a_collective_that_spins_past_the_step_is_never_more_than_the_step():
    # The DDP loops on an H200 pair: NCCL kernels also spin while they wait for the other
    # rank, and their device time added up to 139% of the step.
    from compilescope.model.measured.timing import OutsideWork

    r = gpu_real(
        compiled=sample(0.0215),
        graphs=(),
        outside=(OutsideWork("collective", "ncclDevKernel_AllReduce", 0.030, 40.0, 0.004),
                 OutsideWork("eager_op", "aten::mm", 0.0017, 12.0)),
        outside_graphs_s=0.0215,
        between_s=0.0,
        split_wall=sample(0.024),
    )  # fmt: skip
    (f,) = [f for f in findings(capture_of(r)) if f.kind == "exposed_collectives"]
    assert 0 < f.cost.share <= 1.0 and "(" in f.what and "139%" not in f.what
    parts = step_budget(r)
    assert sum(p.seconds for p in parts) == pytest.approx(0.0215)
    assert all(0 <= p.share <= 1 for p in parts)


def test_an_eager_op_outside_the_graphs_names_the_users_function():
    from compilescope.model.measured.timing import OutsideWork

    outside = (
        OutsideWork("eager_op", "aten::mm", 0.004, 2.0, where="train.py:40 step"),
        OutsideWork("eager_op", "aten::mm", 0.003, 1.0, where="train.py:12 log_stats"),
    )
    r = gpu_real(outside=outside, outside_graphs_s=0.007, between_s=0.013)
    names = [p.name for p in step_budget(r)]
    assert "eager aten::mm in train.py:40 step (outside the compiled graphs)" in names
    assert "eager aten::mm in train.py:12 log_stats (outside the compiled graphs)" in names
    eager = [f for f in findings(capture_of(r)) if f.kind == "eager_ops_outside"]
    assert sorted(f.what.split(", outside")[0] for f in eager) == [
        "`aten::mm` runs eagerly in train.py:12 log_stats",
        "`aten::mm` runs eagerly in train.py:40 step",
    ]


def test_small_eager_ops_of_one_function_keep_its_name_once():
    from compilescope.model.measured.timing import OutsideWork

    tiny = tuple(
        OutsideWork("eager_op", "aten::add", 0.00001, 1.0, where=f"t.py:{i} f") for i in (1, 1)
    )
    parts = step_budget(gpu_real(outside=tiny, outside_graphs_s=0.00002, between_s=0.01998))
    (grouped,) = [p for p in parts if "small eager ops" in p.name]
    assert grouped.name == "2 small eager ops (aten::add) in t.py:1 f (outside the compiled graphs)"


def test_the_optimizers_update_names_the_function_that_stepped_it():
    from compilescope.model.measured.timing import OutsideWork

    outside = tuple(
        OutsideWork("eager_op", f"aten::_foreach_{op}", 0.0004, 1.0, where="train.py:40 step")
        for op in ("add_", "mul_")
    )
    names = [p.name for p in step_budget(gpu_real(outside=outside))]
    assert "optimizer update (_foreach_add_, _foreach_mul_), eager in train.py:40 step" in names


def test_a_loop_with_nothing_compiled_gets_no_not_faster_verdict():
    # Eager against eager (nothing compiled ran): the not_compiled finding is the answer.
    r = gpu_real(graphs=(), compiled=sample(0.0172), eager=sample(0.0172))
    kinds = [f.kind for f in findings(capture_of(r))]
    assert "not_compiled" in kinds and "compiled_not_faster" not in kinds


def test_no_finding_on_a_recorded_gpu_step_is_more_than_the_step():
    # An fp32-matmul loop on an H200 (benchmarks/raw/step_budget_2, today's code): its kernels'
    # device time added up to 110% of the stopwatch's step. The budget scales its parts to the
    # step; the fp32 finding read "35.387 ms per step (109% of the step)" until it took the
    # same scale.
    import compilescope
    from compilescope.model.measured.step_budget import device_scale, step_budget

    raw = Path(__file__).resolve().parents[2] / "benchmarks" / "raw" / "step_budget_2"
    cap = compilescope.Capture.from_json((raw / "fp32_matmul_tf32.capture.json").read_text())
    real = cap.timings.real_steps
    assert device_scale(real) < 0.95  # the recorded case: the device parts outrun the step
    parts = step_budget(real)
    assert sum(p.seconds for p in parts) == pytest.approx(real.compiled.median_s)
    found = compilescope.findings(cap)
    assert found[0].kind == "compiled_not_faster"  # 32.587 ms against 32.612 ms eager
    # Nothing lost: no "cost: 0.000 ms per step, 0% of the step" line under the verdict.
    from compilescope.model.findings.ranked import cost_text

    assert found[0].cost.step_s is None and cost_text(found[0]) == ""
    fp32 = next(f for f in found if f.kind == "fp32_matmul")
    graphs = sum(p.share for p in parts if p.kind == "graph")
    assert 0.9 < fp32.cost.share <= graphs <= 1.0
    assert all(f.cost.share is None or f.cost.share <= 1.0 for f in found)
