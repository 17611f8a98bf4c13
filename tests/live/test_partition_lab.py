"""The partition lab on real CPU compiles: re-partitioning reproduces the captured split,
budgets trade activation memory for recomputation, results survive JSON, the graph does not."""

from __future__ import annotations

import gc
import json
import weakref

import compilescope
import pytest
import torch
import torch._functorch.config as functorch_config
import torch._inductor.config as inductor_config
from compilescope.model.serialize import json_schema
from workloads import ConvBN, MLPBlock

pytestmark = pytest.mark.torch


def transformer_block():
    return torch.nn.TransformerEncoderLayer(
        d_model=32, nhead=4, dim_feedforward=64, batch_first=True, dropout=0.0
    )


def the_compile(cap):
    found = [c for c in cap if c.partition is not None]
    assert len(found) == 1, [str(c.id) for c in cap]
    return found[0]


@pytest.fixture(scope="module")
def mlp_inductor():
    torch.manual_seed(0)
    return compilescope.capture(MLPBlock(), torch.randn(16, 32), timings=False)


CASES = {
    # model, input shape, backend, partitioner
    "mlp-inductor-default": (MLPBlock, (16, 32), "inductor", "default"),
    "transformer-inductor": (transformer_block, (2, 8, 32), "inductor", None),
    "cnn_bn-aot_eager": (ConvBN, (2, 3, 8, 8), "aot_eager", None),
    "transformer-aot_eager-default": (transformer_block, (2, 8, 32), "aot_eager", "default"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_repartition_with_the_captured_choice_reproduces_the_split(case):
    make, shape, backend, partitioner = CASES[case]
    torch.manual_seed(0)
    cap = compilescope.capture(
        make(), torch.randn(*shape), backend=backend, partitioner=partitioner, timings=False
    )
    c = the_compile(cap)
    assert c.partitioner == (partitioner or "min_cut")
    again = c.repartition(c.partitioner, c.memory_budget)
    assert again.saved_names == c.partition.saved_names  # the same tensors, by name, in order
    assert again.recomputed == c.partition.recomputed


def test_mlp_inductor_min_cut_reproduces_and_recomputes(mlp_inductor):
    c = the_compile(mlp_inductor)
    assert (c.partitioner, c.memory_budget) == ("min_cut", None)
    again = c.repartition("min_cut")
    assert again.saved_names == c.partition.saved_names
    # Inductor's min-cut recomputes gelu's elementwise ops in the backward instead of saving them.
    assert c.partition.recomputed_ops > 0
    assert set(c.partition.recomputed) <= {n.name for n in c.graph("aot_forward_graph").nodes}


def test_a_budget_set_during_capture_is_recorded_and_reproduced():
    torch.manual_seed(0)
    with functorch_config.patch(activation_memory_budget=0.3):
        cap = compilescope.capture(
            MLPBlock(), torch.randn(16, 32), backend="aot_eager", timings=False
        )
    c = the_compile(cap)
    assert c.memory_budget == pytest.approx(0.3)
    assert c.repartition("min_cut", 0.3).saved_names == c.partition.saved_names
    assert functorch_config.activation_memory_budget == 1.0  # the lab restored it


def test_budget_sweep_trades_memory_for_recomputation(mlp_inductor):
    c = the_compile(mlp_inductor)
    sweep = c.budget_sweep()
    budgets = [r.memory_budget for r in sweep.min_cut]
    assert budgets[0] == 0.0 and budgets[-1] is None and len(budgets) == 11
    none, full = sweep.min_cut[0].partition, sweep.min_cut[-1].partition
    # No budget keeps activations; a zero budget keeps none and recomputes the matmul too.
    assert full.activation_bytes > 0 and none.activation_bytes == 0
    assert none.recomputed_ops > full.recomputed_ops
    assert none.recompute_flops > 0 and "addmm" in none.recomputed
    assert sweep.default is not None and sweep.default.partition.recomputed_ops == 0
    points = sweep.points
    assert [p["captured"] for p in points].count(True) == 1
    assert points[-2]["captured"] and points[-2]["budget"] == 1.0  # min-cut, no budget
    assert points[-1]["partitioner"] == "default"


def test_activation_memory_counts_only_what_the_forward_computed(mlp_inductor):
    c = the_compile(mlp_inductor)
    p = c.partition
    forward = c.graph("aot_forward_graph")
    kinds = {s.name: s.kind for s in p.saved}
    for s in p.saved:
        owner = forward.node(s.owner or s.name)
        assert (s.kind == "input") == (owner.op == "placeholder"), s
    assert any(k == "input" for k in kinds.values()) and any(
        k == "activation" for k in kinds.values()
    )
    assert 0 < p.activation_bytes < p.saved_bytes
    expected = sum(s.nbytes for s in p.saved if s.kind == "activation" and not s.owner)
    assert p.activation_bytes >= expected


def test_saved_capture_keeps_results_not_the_graph(mlp_inductor, tmp_path):
    c = the_compile(mlp_inductor)
    made = c.repartition("min_cut", 0.5)
    text = mlp_inductor.to_json()
    jsonschema = pytest.importorskip("jsonschema")  # the GPU machine (torch 2.11 check) lacks it
    jsonschema.validate(json.loads(text), json_schema())
    back = compilescope.Capture.from_json(text)
    b = the_compile(back)
    assert b.lab is None and (b.partitioner, b.memory_budget) == ("min_cut", None)
    assert b.repartition("min_cut", 0.5) == made  # read back, nothing run
    with pytest.raises(compilescope.RepartitionUnavailable, match="only live captures"):
        b.repartition("min_cut", 0.25)
    written = next(c for c in json.loads(text)["compiles"] if "repartitions" in c)
    assert "lab" not in written and len(written["repartitions"]) == len(c.repartition_results)


def test_lab_is_released_with_the_capture():
    torch.manual_seed(0)
    cap = compilescope.capture(MLPBlock(), torch.randn(4, 32), backend="aot_eager", timings=False)
    kept = weakref.ref(the_compile(cap).lab._record.graph_module)
    assert kept() is not None
    del cap
    gc.collect()
    assert kept() is None


def test_settings_are_restored_also_when_the_code_raises():
    before = inductor_config.custom_partitioner_fn
    with pytest.raises(ZeroDivisionError):
        with compilescope.capturing():
            torch.compile(lambda x: x.sin())(torch.randn(3, requires_grad=True)).sum().backward()
            1 / 0  # noqa: B018
    assert inductor_config.custom_partitioner_fn is before


@pytest.mark.parametrize(
    "args, error, words",
    [
        (("minimum",), ValueError, "partitioner must be one of"),
        (("min_cut", 1.5), ValueError, r"memory_budget must be in \[0, 1\]"),
        (("min_cut", "half"), TypeError, "memory_budget must be a number"),
        (("default", 0.5), ValueError, "min_cut partitioner only"),
    ],
)
def test_bad_arguments_name_what_is_wrong(mlp_inductor, args, error, words):
    with pytest.raises(error, match=words):
        the_compile(mlp_inductor).repartition(*args)


def test_a_log_cannot_be_repartitioned_and_says_why():
    from conftest import FIXTURES

    cap = compilescope.load_trace(FIXTURES / "module_backward.log.gz")
    c = the_compile(cap)
    assert c.partition.activation_bytes > 0
    with pytest.raises(compilescope.RepartitionUnavailable, match="joint graph was not kept"):
        c.repartition()


def test_fallback_and_figure_show_the_sweep(mlp_inductor):
    from compilescope.views.charts.figures import sweep_figure
    from compilescope.views.result_view import fallback_html, view_data
    from matplotlib.figure import Figure

    c = the_compile(mlp_inductor)
    sweep = c.budget_sweep()
    figure = sweep_figure(sweep)
    assert isinstance(figure, Figure) and figure.axes[0].get_xlabel().startswith("activation")
    html = fallback_html(mlp_inductor, view_data(mlp_inductor))
    section = html[html.index("cs-partitions") :]
    assert "activation memory" in section and "<svg" in section and "<script" not in html
    assert section.count("<tr>") >= len(sweep.points)  # the sweep's table, a row a point
    data = view_data(mlp_inductor)["compiles"][0]["partition"]
    assert len(data["sweep"]) == len(sweep.points) and data["lab"] == ""


def test_magic_sweeps_small_graphs_itself():
    from compilescope.live.trials.partition_lab import sweep_small_graphs

    torch.manual_seed(0)
    cap = compilescope.capture(MLPBlock(), torch.randn(4, 32), backend="aot_eager", timings=False)
    c = the_compile(cap)
    assert c.sweep() is None
    sweep_small_graphs(cap, max_nodes=10)  # too big for this limit: nothing runs
    assert c.sweep() is None
    sweep_small_graphs(cap)
    assert len(c.sweep().min_cut) == 11


def test_joint_graphs_are_kept_within_a_bound(monkeypatch):
    from compilescope.live.trials import partition_lab

    monkeypatch.setattr(partition_lab, "MAX_KEPT_NODES", 10)
    torch.manual_seed(0)
    cap = compilescope.capture(MLPBlock(), torch.randn(4, 32), backend="aot_eager", timings=False)
    c = the_compile(cap)
    assert c.lab is None and "at most 10" in c.lab_reason
    with pytest.raises(compilescope.RepartitionUnavailable, match="was not kept"):
        c.repartition()


def test_torch_does_not_copy_the_session_through_our_hooks():
    # torch deep-copies Inductor's config at every compile to log it; our hooks hold the
    # session (every record so far): they must come back as themselves, not as copies.
    with compilescope.capturing():
        config = inductor_config.get_config_copy()
        assert config["custom_partitioner_fn"] is inductor_config.custom_partitioner_fn
        assert config["joint_custom_pre_pass"] is inductor_config.joint_custom_pre_pass


def test_a_dynamic_compile_is_still_reproduced_after_a_sweep():
    # FLOPs at symbolic sizes once guarded on the symbol (specializing it in the compile's
    # shape environment), so runs after budget 0 stopped saving the size.
    torch.manual_seed(0)
    cap = compilescope.capture(
        MLPBlock(), torch.randn(12, 32), backend="aot_eager", dynamic=True, timings=False
    )
    c = the_compile(cap)
    assert any(s.kind == "symbol" for s in c.partition.saved)
    sweep = c.budget_sweep()
    assert sweep.min_cut[-1].partition.saved_names == c.partition.saved_names
    assert [p["captured"] for p in sweep.points].count(True) == 1
