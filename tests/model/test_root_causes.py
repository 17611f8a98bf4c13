"""Findings that claim the same milliseconds folded onto their cause: a graph break's host syncs
and the time between the graphs it splits are the break's, not launch-bound's (the second blind
round's `if` on a tensor in 12 blocks ranked syncs and launch-bound above the break)."""

from __future__ import annotations

from dataclasses import replace

import compilescope
from compilescope.model.findings.catalog import remedy
from compilescope.model.findings.parts import Cost, Finding, Fix, Setting
from compilescope.model.findings.ranked import score
from compilescope.model.findings.root_cause import in_function_of, onto_their_causes
from compilescope.model.measured.timing import ReadPlace, RealSteps, Sample, Timings
from compilescope.model.place import Place

STEP = 0.020
BRANCH = Place("/home/me/model.py", 63, "forward", "elif amax > self.limit:")


def _capture(reads: float, places: tuple[ReadPlace, ...]) -> compilescope.Capture:
    real = RealSteps(
        device="cuda:0",
        compiled=Sample(STEP, STEP, STEP, 10),
        busy_s=0.002,
        syncs_per_step=reads + 1,
        scalar_reads_per_step=reads,
        sync_idle_s=0.0063,
        read_places=places,
    )
    return compilescope.Capture((), timings=Timings(device="cuda:0", real_steps=real))


def _found() -> list[Finding]:
    brk = Finding(
        "data_dependent",
        "`elif amax > self.limit:` breaks the graph: Data-dependent branching.",
        "data_dependent:branch",
        user=BRANCH,
        cost=Cost(step_s=0.0106, share=0.53),
        fixes=(Fix("code", "torch.cond", change="Use `torch.cond` for the branch"),),
    )
    sync = Finding(
        "host_sync", "The CPU waits.", "host_sync", cost=Cost(step_s=0.0063, share=0.315)
    )
    cudagraphs = Fix(
        "setting", "CUDA graphs", (Setting("mode", "compile_kwarg", "reduce-overhead"),)
    )
    launch = Finding(
        "launch_bound",
        "The GPU is idle.",
        "launch_bound",
        cost=Cost(step_s=0.0114, share=0.57),
        fixes=(remedy("avoid_syncs").fix(), cudagraphs),
    )
    return [launch, sync, brk]


def _in(function: str, first_line: int) -> str:
    """A profiled function as the real steps name it: "dir/file.py:12 fn"."""
    return f"{Place(BRANCH.file, first_line, function).label()} {function}"


def test_syncs_in_a_breaks_function_are_the_breaks_and_it_outranks_launch_bound():
    capture = _capture(12.0, (ReadPlace(_in("forward", 61), 12.0),))
    found = {f.kind: f for f in onto_their_causes(_found(), capture)}
    assert "host_sync" not in found  # its waits are the break's
    brk = found["data_dependent"]
    assert "reads a tensor's value on the host (12 times a step)" in brk.what
    assert "idle 6.300 ms a step (32%)" in brk.what and brk.cost.waited_s == 0.0063
    # Launch-bound keeps the idle time outside the break's gaps: 11.4 - (10.6 - 6.3) ms.
    launch = found["launch_bound"]
    assert abs(launch.cost.step_s - 0.0071) < 1e-9 and abs(launch.cost.share - 0.355) < 1e-9
    assert "Of the idle time, 4.300 ms is counted with the findings that cause it" in launch.what
    # ... and its "remove the syncs first" points at the break, not at logging less often.
    assert launch.fixes[0].where == BRANCH and launch.fixes[0].change.startswith("Use `torch.cond`")
    assert [f.title for f in launch.fixes[1:]] == ["CUDA graphs"]
    assert score(brk) > score(launch)
    # Before the fold, the break ranked below both (the blind round's order).
    before = {f.kind: score(f) for f in _found()}
    assert before["data_dependent"] < before["launch_bound"]


def test_syncs_elsewhere_stay_their_own_finding():
    # The reads are in the training loop's step (`.item()` for a log), not at the break.
    capture = _capture(12.0, (ReadPlace(f"{Place('/home/me/train.py', 90).label()} step", 12.0),))
    found = {f.kind: f for f in onto_their_causes(_found(), capture)}
    assert found["host_sync"].cost.step_s == 0.0063
    assert found["data_dependent"].cost.waited_s is None
    # Half the reads at the break: half the waits go with it, the rest stay syncs.
    half = _capture(12.0, (ReadPlace(_in("forward", 61), 6.0), ReadPlace(_in("step", 80), 6.0)))
    split = {f.kind: f for f in onto_their_causes(_found(), half)}
    assert abs(split["data_dependent"].cost.waited_s - 0.00315) < 1e-9
    assert abs(split["host_sync"].cost.step_s - 0.00315) < 1e-9


def test_a_function_holds_a_place_only_by_file_name_and_first_line():
    assert in_function_of(_in("forward", 61), BRANCH)
    assert not in_function_of(_in("forward", 70), BRANCH)  # starts after the line
    assert not in_function_of(_in("step", 61), BRANCH)
    assert not in_function_of(f"{Place('/x/other.py', 61).label()} forward", BRANCH)
    cell = Place("<ipython-input-3-ab>", 5, "forward", cell=3)
    assert in_function_of("cell [3] line 2 forward", cell)
    assert not in_function_of("cell [4] line 2 forward", cell)


def test_launch_bound_time_all_between_broken_graphs_is_no_finding_of_its_own():
    capture = _capture(12.0, (ReadPlace(_in("forward", 61), 12.0),))
    small = [replace(f, cost=Cost(step_s=0.005, share=0.25)) if f.kind == "launch_bound" else f
             for f in _found()]  # fmt: skip
    kinds = [f.kind for f in onto_their_causes(small, capture)]
    assert "launch_bound" not in kinds and "data_dependent" in kinds


# The third blind round's `logger.debug` in 12 blocks, as the H200 capture held it: the model's
# `forward` (line 89) fell back to eager (a break in its loop), so each block's `forward` (line
# 65, called at line 93) compiled on its own, once per `self.idx`, until the limit.
LM = "/home/me/lm.py"


def _lm_capture(eager_calls: float) -> compilescope.Capture:
    from compilescope.model.compile import Compile, Frame
    from compilescope.model.compile_id import CompileId
    from compilescope.model.measured.timing import KernelTiming, OutsideWork

    block_stack = (Place(LM, 121, "step"), Place(LM, 93, "forward"), Place(LM, 65, "forward"))
    model = Compile(CompileId(frame_id=0, frame_compile_id=0), Frame("forward", LM, 89),
                    failure="graph break in loop")  # fmt: skip
    blocks = tuple(
        Compile(CompileId(frame_id=1, frame_compile_id=i), Frame("forward", LM, 65, block_stack))
        for i in range(8)
    )
    real = RealSteps(
        device="cuda:0",
        compiled=Sample(0.025, 0.025, 0.025, 10),
        busy_s=0.0034,
        kernels=(KernelTiming("2/0", "triton_fused_0", Sample(4e-6, 4e-6, 4e-6, 10), 368.0),),
        outside=(
            OutsideWork("eager_op", "aten::addmm", 0.0001, eager_calls / 2, where="me/lm.py:65 forward"),
            OutsideWork("eager_op", "aten::mm", 0.0003, eager_calls / 2, where="me/lm.py:121 step"),
        ),
    )  # fmt: skip
    return compilescope.Capture((model, *blocks), timings=Timings(device="cuda:0", real_steps=real))


def _lm_found() -> list[Finding]:
    logging_fix = Fix("setting", "ignore the logging call", change="ignore_logging_functions")
    eager = Finding("eager_frame", "The logging call makes `forward` fall back to eager.",
                    "eager_frame:log", user=Place(LM, 67, "forward"), compile_ids=("0/0", "1/0"),
                    fixes=(logging_fix,))  # fmt: skip
    limit = Finding("recompile_limit", "`forward` hit the recompile limit (8).", "limit",
                    user=Place(LM, 65, "forward"), compile_ids=tuple(f"1/{i}" for i in range(8)),
                    fixes=(Fix("code", "keep `self.idx` in a tensor buffer"),))  # fmt: skip
    cudagraphs = Fix(
        "setting", "CUDA graphs", (Setting("mode", "compile_kwarg", "reduce-overhead"),)
    )
    launch = Finding("launch_bound", "The GPU is idle.", "launch_bound",
                     cost=Cost(step_s=0.0215, share=0.86), fixes=(cudagraphs,))  # fmt: skip
    return [launch, eager, limit]


def test_a_frame_at_the_limit_under_an_eager_frame_and_its_eager_launches_are_the_breaks():
    found = onto_their_causes(_lm_found(), _lm_capture(eager_calls=277.0))
    kinds = [f.kind for f in found]
    assert "recompile_limit" not in kinds  # said within the eager frame: one cause
    eager = next(f for f in found if f.kind == "eager_frame")
    assert "the frames it calls compile on their own" in eager.what
    assert "`forward` hit the recompile limit (8)." in eager.what
    assert [x.title for x in eager.fixes] == ["ignore the logging call"]
    # The idle time is shared by launch: 277 eager of 645 launches are the eager frame's.
    claimed = 0.0215 * 277 / 645
    assert (
        abs(eager.cost.step_s - claimed) < 1e-9 and abs(eager.cost.share - claimed / 0.025) < 1e-9
    )
    assert "277 kernels a step are launched by eager ops (43% of the step's launches)" in eager.what
    launch = next(f for f in found if f.kind == "launch_bound")
    assert abs(launch.cost.step_s - (0.0215 - claimed)) < 1e-9
    assert [x.title for x in launch.fixes] == ["ignore the logging call", "CUDA graphs"]
    assert score(eager) > score(launch)
    # Before: launch-bound with CUDA graphs first, above the break (the blind round's order).
    assert score(_lm_found()[0]) > score(_lm_found()[1])


def test_eager_launches_stay_launch_bounds_where_the_causes_frames_ran_none():
    capture = _lm_capture(eager_calls=277.0)
    real = capture.timings.real_steps
    elsewhere = tuple(replace(w, where="me/lm.py:121 step") for w in real.outside)
    moved = replace(
        capture, timings=replace(capture.timings, real_steps=replace(real, outside=elsewhere))
    )
    found = onto_their_causes(_lm_found(), moved)
    launch = next(f for f in found if f.kind == "launch_bound")
    assert launch.cost.step_s == 0.0215 and launch.fixes[0].title == "CUDA graphs"
    # A limit in a frame not called from the eager frame stays its own finding.
    apart = [replace(f, compile_ids=("9/0",)) if f.kind == "recompile_limit" else f
             for f in _lm_found()]  # fmt: skip
    assert "recompile_limit" in [f.kind for f in onto_their_causes(apart, capture)]


def test_the_logging_loops_h200_capture_ranks_the_break_above_launch_bound():
    # The capture itself (benchmarks/suites/blind_set.py --keep, H200, torch 2.11): before the
    # fold, launch-bound (81%, CUDA graphs) ranked #2 and the break #3.
    import gzip
    from pathlib import Path

    path = (
        Path(__file__).resolve().parents[1]
        / "fixtures"
        / "b3_logging_graph_break_h200.capture.json.gz"
    )
    cap = compilescope.Capture.from_json(gzip.decompress(path.read_bytes()))
    kinds = [f.kind for f in compilescope.findings(cap)]
    assert kinds[:3] == ["compiled_slower", "eager_frame", "launch_bound"]
    assert "recompile_limit" not in kinds
    top = compilescope.findings(cap)[1]
    assert top.fix is not None and "ignore_logging_functions" in (top.fix.python() or "")


def _backbone_capture(grads: int, stepped: int) -> compilescope.Capture:
    """A ResNet-50 under a new head, as the fourth blind round's H200 capture held it: one
    compile, whose backward returns `grads` gradients; optimizers stepping `stepped` tensors."""
    from compilescope.model.compile import Compile
    from compilescope.model.compile_id import CompileId
    from compilescope.model.graph import Graph, Node
    from compilescope.model.measured.timing import GraphShare, KernelTiming, OptimizerSeen

    out = Node("output", "output", "output", inputs=tuple(f"g{i}" for i in range(grads)))
    c = Compile(CompileId(frame_id=0, frame_compile_id=0),
                graphs={"aot_backward_graph": (Graph("aot_backward_graph", "", (out,)),)})  # fmt: skip
    launch = Sample(20e-6, 20e-6, 20e-6, 10)
    real = RealSteps(
        device="cuda:0",
        compiled=Sample(0.0285, 0.0285, 0.0285, 10),
        busy_s=0.016,
        graphs=(GraphShare("0/0", "forward", 0.0053, 200), GraphShare("0/0", "backward", 0.0097, 485)),
        kernels=(KernelTiming("0/0", "triton_fwd", launch, 200.0, role="forward"),
                 KernelTiming("0/0", "triton_bwd", launch, 485.0, role="backward")),
        optimizers=(OptimizerSeen("SGD", stepped, None, None, True, "train.py", 9, "opt = SGD(head)"),),
    )  # fmt: skip
    return compilescope.Capture((c,), timings=Timings(device="cuda:0", real_steps=real))


def test_a_backward_of_many_more_gradients_than_stepped_names_the_freeze_and_its_launches():
    found = compilescope.findings(_backbone_capture(grads=161, stepped=2))
    top = found[0]
    assert top.kind == "unused_gradients" and top.fix.title == "freeze what you do not train"
    assert "computes 161 gradients, but your optimizers step 2 parameter tensors" in top.what
    # The backward's time by the share of gradients computed for nothing, and that share of
    # its launches' idle time (12.5 ms idle, 485 of 685 launches): launch-bound keeps the rest.
    own = 0.0097 * 159 / 161
    idle = 0.0285 - 0.016
    moved = idle * (159 / 161) * 485 / 685
    assert abs(top.cost.step_s - (own + moved)) < 1e-9
    kinds = [f.kind for f in found]
    assert "launch_bound" not in kinds  # what is left of it is under its threshold
    # Every gradient stepped (a model trained whole, or frozen as the fix says): no finding.
    assert "unused_gradients" not in [
        f.kind for f in compilescope.findings(_backbone_capture(161, 161))
    ]
    assert "unused_gradients" not in [
        f.kind for f in compilescope.findings(_backbone_capture(3, 2))
    ]


def _stored(name: str) -> compilescope.Capture:
    import gzip
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "fixtures" / f"{name}_h200.capture.json.gz"
    return compilescope.Capture.from_json(gzip.decompress(path.read_bytes()))


def test_an_rnn_cell_looped_over_time_steps_names_the_fused_module_first():
    # The fourth blind round's `nn.LSTMCell` over 32 steps (H200 capture): answered with
    # launch-bound and CUDA graphs first (`nn.LSTM`: 2.42x).
    cap = _stored("b4_lstmcell_python_loop")
    found = compilescope.findings(cap)
    top = found[0]
    assert top.kind == "recurrent_loop" and top.fix.title == "the fused recurrent module"
    assert "`torch.lstm_cell` is called 32 times in 0/0's graph" in top.what
    assert "`nn.LSTM` runs the whole sequence" in top.what
    assert "nn.LSTM(input_size, hidden_size, batch_first=True)" in top.fix.change
    # Its graph's time, and the idle time of its launches (all of the step's): launch-bound's.
    assert "launch_bound" not in [f.kind for f in found]
    assert top.cost.share > 0.9
    # Fewer cell calls than a loop over a sequence: no finding.
    from compilescope.model.findings.recurrent_loops import recurrent_loop_findings
    from compilescope.model.graph import Graph

    (c,) = list(cap)
    g = c.graph("dynamo_output_graph")
    cells = [n for n in g.nodes if n.target == "torch.lstm_cell"]
    few = Graph("dynamo_output_graph", "", [n for n in g.nodes if n not in cells[4:]])
    short = replace(c, graphs={**c.graphs, "dynamo_output_graph": (few,)})
    assert recurrent_loop_findings(replace(cap, compiles=(short,)), cap.timings.real_steps) == []


def _item_breaks(function: str) -> list[Finding]:
    return [
        Finding("data_dependent", "`.item()` (a tensor read into a Python number) breaks the graph.",
                f"data_dependent:item@{line}", user=Place("/home/me/metrics.py", line, function),
                counts=compilescope.model.findings.parts.Counts(breaks=2),
                fixes=(Fix("setting", "capture_scalar_outputs"),))
        for line in (45, 47, 49, 51, 53)
    ]  # fmt: skip


def _step_capture(entry: str) -> compilescope.Capture:
    from compilescope.model.compile import Compile, Frame
    from compilescope.model.compile_id import CompileId

    c = Compile(CompileId(frame_id=0, frame_compile_id=0), Frame(entry, "/home/me/metrics.py", 70))
    return compilescope.Capture((c,))


def test_many_breaks_in_one_helper_fold_into_keeping_it_out_of_the_compiled_code():
    # The second compile-time blind round's running metrics: `update` read 5 values with
    # `.item()` inside a compiled `train_step`; each break was its own finding (remedy at #14).
    (one,) = onto_their_causes(_item_breaks("update"), _step_capture("train_step"))
    assert one.kind == "graph_break" and one.counts.breaks == 10
    assert one.what.startswith("`update` breaks the graph at 5 of its lines (10 breaks)")
    assert one.fix.title == "keep `update` out of the compiled code"
    assert "@torch.compiler.disable" in one.fix.change and one.user.line == 45
    assert [f.title for f in one.fixes[1:]] == ["capture_scalar_outputs"]
    # The function torch.compile was given, or a module's forward: never told to stay out.
    assert len(onto_their_causes(_item_breaks("train_step"), _step_capture("train_step"))) == 5
    assert len(onto_their_causes(_item_breaks("forward"), _step_capture("train_step"))) == 5
    # Two lines are two breaks to fix, not a helper to keep out.
    assert len(onto_their_causes(_item_breaks("update")[:2], _step_capture("train_step"))) == 2
