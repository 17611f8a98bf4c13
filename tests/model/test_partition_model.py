"""The partition from a forward and a backward graph: real activation memory (views followed to
their owners, aliasing counted once), recomputed nodes, and the sweep's points. No torch."""

from __future__ import annotations

import pytest
from compilescope.model.graph import Graph
from compilescope.model.partition import (
    BudgetSweep,
    Partition,
    Repartition,
    check_repartition_args,
    partition_between,
    sweep_from,
)
from compilescope.trace.graph_text import parse_graph_nodes

# A forward that saves: a view of a parameter (t), an activation (mm) and two views of it
# (view, permute: the same memory), an item of a multi-output op (getitem_1) and a size.
FORWARD = """class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[64, 32][32, 1]cpu", primals_2: "f32[8, 64][64, 1]cpu", primals_3: "Sym(s0)"):
        t: "f32[32, 64][1, 32]cpu" = torch.ops.aten.t.default(primals_1)
        mm: "f32[8, 32][32, 1]cpu" = torch.ops.aten.mm.default(primals_2, t)
        view: "f32[4, 64][64, 1]cpu" = torch.ops.aten.view.default(mm, [4, 64])
        permute: "f32[64, 4][1, 64]cpu" = torch.ops.aten.permute.default(view, [1, 0])
        var_mean = torch.ops.aten.var_mean.correction(mm, [1])
        getitem: "f32[8, 1][1, 1]cpu" = var_mean[0]
        getitem_1: "f32[8, 1][1, 1]cpu" = var_mean[1]
        relu: "f32[8, 32][32, 1]cpu" = torch.ops.aten.relu.default(mm)
        return (relu, t, view, permute, getitem_1, primals_3)
"""
BACKWARD = """class GraphModule(torch.nn.Module):
    def forward(self, t: "f32[32, 64][1, 32]cpu", view: "f32[4, 64][64, 1]cpu", permute: "f32[64, 4][1, 64]cpu", getitem_1: "f32[8, 1][1, 1]cpu", primals_3: "Sym(s0)", tangents_1: "f32[8, 32][32, 1]cpu"):
        relu: "f32[8, 32][32, 1]cpu" = torch.ops.aten.relu.default(view)
        permute_1: "f32[64, 32][32, 1]cpu" = torch.ops.aten.permute.default(t, [1, 0])
        mul: "f32[8, 32][32, 1]cpu" = torch.ops.aten.mul.Tensor(tangents_1, relu)
        return (mul, permute_1)
"""


def graph(kind: str, text: str) -> Graph:
    return Graph(kind, text, parse_graph_nodes(text))


@pytest.fixture
def partition() -> Partition:
    return partition_between(
        graph("aot_forward_graph", FORWARD), graph("aot_backward_graph", BACKWARD)
    )


def test_saved_tensors_say_what_they_are(partition):
    by_name = {s.name: s for s in partition.saved}
    assert [s.name for s in partition.saved] == ["t", "view", "permute", "getitem_1", "primals_3"]
    assert (by_name["t"].kind, by_name["t"].owner) == ("input", "primals_1")
    assert (by_name["view"].kind, by_name["view"].owner) == ("activation", "mm")
    assert (by_name["permute"].kind, by_name["permute"].owner) == ("activation", "mm")
    assert (by_name["getitem_1"].kind, by_name["getitem_1"].owner) == ("activation", "")
    assert by_name["primals_3"].kind == "symbol"


def test_activation_memory_counts_each_owner_once(partition):
    # mm (8 x 32 f32 = 1024 B) once for its two saved views, getitem_1 (8 f32 = 32 B); the
    # transpose of the parameter costs nothing; saved_bytes counts every saved tensor.
    assert partition.activation_bytes == 1024 + 32
    assert partition.saved_bytes == 32 * 64 * 4 + 1024 + 1024 + 32


def test_recomputed_nodes_are_forward_nodes_the_backward_computes_again(partition):
    assert partition.recomputed == ("relu",)
    assert (partition.recomputed_ops, partition.recomputed_views) == (1, 0)


def test_sweep_points_mark_the_captured_choice(partition):
    def made(budget, nbytes):
        return Repartition("min_cut", budget, Partition(partition.saved[: nbytes or 1]))

    results = (made(0.0, 1), made(0.5, 3), made(None, 5), Repartition("default", None, partition))
    captured = Partition(partition.saved, partitioner="min_cut", memory_budget=None)
    sweep = sweep_from(results, captured)
    assert isinstance(sweep, BudgetSweep)
    points = sweep.points
    assert [p["budget"] for p in points] == [0.0, 0.5, 1.0, 1.0]
    assert [p["captured"] for p in points] == [False, False, True, False]
    assert sweep_from(results[:1], captured) is None  # one min-cut point is not a sweep


@pytest.mark.parametrize(
    "args, error",
    [
        (("greedy", None), ValueError),
        (("min_cut", -0.1), ValueError),
        (("min_cut", True), TypeError),
    ],
)
def test_bad_repartition_arguments(args, error):
    with pytest.raises(error):
        check_repartition_args(*args)
    assert check_repartition_args("min_cut", 1) == 1.0


def test_symbolic_activation_sizes_read_as_symbolic_not_zero():
    from compilescope.model.graph import TensorMeta
    from compilescope.model.partition import Partition, SavedTensor

    fixed = TensorMeta("f32", ("4", "8"), ("8", "1"), "cpu")  # 128 bytes
    symbolic = TensorMeta("f32", ("s0", "8"), ("8", "1"), "cpu")
    only_symbolic = Partition(saved=(SavedTensor("a", symbolic, kind="activation"),))
    assert only_symbolic.activation_bytes == 0
    assert only_symbolic.symbolic_activations == ("a",)
    assert only_symbolic.activation_text() == "1 activation of symbolic size"
    mixed = Partition(
        saved=(
            SavedTensor("a", symbolic, kind="activation"),
            SavedTensor("b", fixed, kind="activation"),
            SavedTensor("x", symbolic, kind="input"),  # alive anyway: not an activation
        )
    )
    assert mixed.activation_text() == "128 B + 1 of symbolic size"
    assert (
        Partition(saved=(SavedTensor("b", fixed, kind="activation"),)).activation_text() == "128 B"
    )
