"""Module paths inferred for graphs a plain log prints without them (AOTAutograd's): a CNN's
batch norms and residual adds land in their own modules, so the explorer's forward reads top to
bottom in model order. From a log torch 2.13 wrote for tests/workloads.py's small_resnet."""

from __future__ import annotations

import pytest
from compilescope.model.graph import Node
from compilescope.model.place import Place
from compilescope.views.explorer.module_groups import (
    gradient_outputs,
    infer_paths,
    line_paths,
    propagate,
    sides,
)
from compilescope.views.stage_graphs import SHOWN_KINDS


@pytest.fixture(scope="module")
def resnet(loaded):
    cap = loaded("small_resnet")
    c = next(c for c in cap if c.graph("aot_joint_graph"))
    return c, infer_paths(c, SHOWN_KINDS)


def _op(node: Node) -> str:
    return node.target.split(".")[-2] if node.target.count(".") > 1 else node.target


@pytest.mark.parametrize("kind", ["aot_joint_graph", "aot_forward_graph"])
def test_a_batch_norms_statistics_are_the_norms(resnet, kind):
    c, paths = resnet
    graph = c.graph(kind)
    assert not any(n.module_path for n in graph.nodes if n.op == "call_function")  # inferred
    stats = [p for n, p in zip(graph.nodes, paths[(kind, 0)], strict=True) if _op(n) == "var_mean"]
    # The stem's norm and both norms of both blocks; by what it reads, var_mean was the conv's.
    assert len(stats) == 5
    assert stats == ["bn1", "layer1.0.bn1", "layer1.0.bn2", "layer1.1.bn1", "layer1.1.bn2"]


def test_a_residual_add_stays_in_its_block(resnet):
    c, paths = resnet
    graph = c.graph("aot_joint_graph")
    adds = [
        p
        for n, p in zip(graph.nodes, paths[("aot_joint_graph", 0)], strict=True)
        if n.source and n.source.code == "out += identity" and _op(n) == "add"
    ]
    # It reads the block's last norm and the block's input (the stem's, or the block before):
    # it is its own block's, never the module its input came from.
    assert len(adds) == 2
    assert adds[0].startswith("layer1.0.") and adds[1].startswith("layer1.1.")


def test_the_forward_half_runs_in_model_order(resnet):
    # Every edge between the forward's top-level modules goes down the model: the layout keeps
    # them all and draws the forward as one column (a cycle dropped edges and staggered it).
    c, paths = resnet
    graph = c.graph("aot_joint_graph")
    path_of = dict(zip((n.name for n in graph.nodes), paths[("aot_joint_graph", 0)], strict=True))
    half = dict(zip((n.name for n in graph.nodes), sides(graph.nodes), strict=True))
    order = ["conv1", "bn1", "layer1", "fc"]
    edges = set()
    for n in graph.nodes:
        for name in n.inputs:
            if half.get(name) == half[n.name] == "forward" and path_of[name] and path_of[n.name]:
                a, b = path_of[name].split(".")[0], path_of[n.name].split(".")[0]
                if a != b:
                    edges.add((a, b))
    assert edges, "the forward's modules are joined"
    assert all(order.index(a) < order.index(b) for a, b in edges), sorted(edges)


def test_a_line_of_many_blocks_takes_the_block_of_what_it_reads():
    # Two blocks run the same source line; a node of that line reading block 1's conv is block 1's.
    line = Place("/m/block.py", 7, "forward", "out = self.bn(out)")
    lines = line_paths(
        [Node("bn_a", "call_function", "f", source=line), Node("bn_b", "call_function", "f", source=line)],
        ["blocks.0.bn", "blocks.1.bn"],
    )  # fmt: skip
    assert lines == {("/m/block.py", 7): ["blocks.0.bn", "blocks.1.bn"]}
    nodes = [
        Node("w", "placeholder", "w", module_path="blocks.1.conv"),
        Node("conv", "call_function", "conv", ("w",)),
        Node("stat", "call_function", "var_mean", ("conv",), source=line),
    ]
    assert propagate(nodes, {}, lines) == ["blocks.1.conv", "blocks.1.conv", "blocks.1.bn"]
    # Without the line, what it reads: the conv.
    assert propagate(nodes, {})[-1] == "blocks.1.conv"


def test_gradient_outputs_read_torchs_comments_on_the_return():
    output = Node(
        "output", "output", "output", ("mm_2", "view_1", "mm_1"),
        "(\n    mm_2,  # GradAOTOutput(grad_of=PlainAOTInput(idx=0))\n"
        "    view_1,  # GradAOTOutput(grad_of=PlainAOTInput(idx=1))\n    None,  # None\n"
        "    mm_1,  # GradAOTOutput(grad_of=PlainAOTInput(idx=3))\n)",
    )  # fmt: skip
    assert gradient_outputs([output]) == {"mm_2": 0, "view_1": 1, "mm_1": 3}
    plain = Node("output", "output", "output", ("mm_2",), "(mm_2,)")
    assert gradient_outputs([plain]) == {}


@pytest.mark.parametrize(
    "fixture", ["module_backward", "small_resnet", "gpt2", "compiled_autograd"]
)
def test_each_parameter_gradient_is_its_parameters_module(loaded, fixture):
    """The node that returns a parameter's gradient (torch names it: `# GradAOTOutput(
    grad_of=PlainAOTInput(idx=3))`) is under that parameter's module. By what it reads, GPT-2's
    c_proj weight gradient was c_fc's, a layer norm's weight gradient the block's before,
    TinyMLP's fc2 weight gradient fc1's (its one line runs both)."""
    checked = 0
    for c in loaded(fixture):
        dynamo = c.graph("dynamo_output_graph")
        if dynamo is None:
            continue
        inputs = [n.module_path for n in dynamo.placeholders]
        paths = infer_paths(c, SHOWN_KINDS)
        for kind in ("aot_backward_graph", "aot_joint_graph"):
            graph = c.graph(kind)
            if graph is None or (kind, 0) not in paths:
                continue
            path_of = dict(zip((n.name for n in graph.nodes), paths[(kind, 0)], strict=True))
            for name, index in gradient_outputs(graph.nodes).items():
                if inputs[index] and name in path_of and graph.node(name).op != "placeholder":
                    assert path_of[name] == inputs[index], (kind, name)
                    checked += 1
    assert checked >= 4


def test_the_gradient_flowing_on_keeps_its_module(loaded):
    """Only ops whose one user makes a parameter's gradient join it: in TinyMLP's backward the
    gradient through fc2 to the relu (an mm of the tangent and fc2's weight, read by the relu's
    backward) stays fc2's, though only fc1's gradients use it."""
    c = loaded("module_backward").compiles[0]
    graph = c.graph("aot_backward_graph")
    path_of = dict(
        zip(
            (n.name for n in graph.nodes),
            infer_paths(c, SHOWN_KINDS)[("aot_backward_graph", 0)],
            strict=True,
        )
    )
    grads = gradient_outputs(graph.nodes)
    weight2 = next(name for name, index in grads.items() if index == 3)  # fc2.weight
    weight1 = next(name for name, index in grads.items() if index == 0)  # fc1.weight
    assert path_of[weight2] == "fc2" and path_of[weight1] == "fc1"
    through = [n for n in graph.nodes if _op(n) == "mm" and "tangents_1" in n.inputs]
    assert len(through) == 1 and path_of[through[0].name] == "fc2"
