"""Which kernels read as replayed in a CUDA graph: only those no wrapper saw, by a name of their own."""

from __future__ import annotations

from compilescope.live.timing.kernel_timer import CallLog
from compilescope.live.timing.step_split import _replayed


def _log(kernel: str, times: list[float] | None = None, calls: int = 0) -> CallLog:
    return CallLog(kernel, "forward", times=list(times or []), calls=calls)


def test_a_graph_replayed_in_a_cuda_graph_gets_the_profilers_times_by_name() -> None:
    # mode="reduce-overhead": the graph's kernels ran, but no Python wrapper of ours did.
    logs = {("0/0", "forward", "triton_poi_fused_relu_0"): _log("triton_poi_fused_relu_0")}
    found = _replayed(logs, {"triton_poi_fused_relu_0": [2e-6, 3e-6]})
    assert found == {("0/0", "forward", "triton_poi_fused_relu_0")}
    assert logs[("0/0", "forward", "triton_poi_fused_relu_0")].times == [2e-6, 3e-6]


def test_a_graph_that_did_not_run_is_not_replayed_under_a_name_that_one_that_ran_has() -> None:
    # The second blind round's 12 blocks with an `if` on a tensor: the resume graphs' compiles
    # name their kernels alike; 1/1 ran (its wrapper timed it), 1/0 did not run in these steps.
    name = "triton_per_fused_native_layer_norm_0"
    logs = {
        ("1/1", "forward", name): _log(name, [4e-6], calls=12),
        ("1/0", "forward", name): _log(name),
    }
    assert _replayed(logs, {name: [4e-6] * 12}) == set()
    assert logs[("1/0", "forward", name)].times == []
    # ... nor is a kernel whose wrapper ran but got no profiler range.
    ran = {("2/0", "forward", "k"): _log("k", calls=3)}
    assert _replayed(ran, {"k": [1e-6]}) == set()
