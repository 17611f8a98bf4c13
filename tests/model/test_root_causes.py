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
