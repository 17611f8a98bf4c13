"""explore() on live torch objects: a GraphModule and an ExportedProgram read as they print."""

from __future__ import annotations

import json

import compilescope
import pytest
import torch
from compilescope.live.compiled_code.fx_graphs import graph_from_torch

pytestmark = pytest.mark.torch


def operators(x, y):
    a = x + y
    b = -a
    c = a @ y
    d = c * 2
    e = d // 3
    f = b - e
    return f, x > y


def fx_target_name(target) -> str:
    if getattr(target, "__module__", None) in ("_operator", "operator"):
        return f"operator.{target.__name__}"
    return str(target)


def test_graph_module_operators_keep_their_real_targets():
    gm = torch.fx.symbolic_trace(operators)
    graph = graph_from_torch(gm)
    expected = {n.name: fx_target_name(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    parsed = {n.name: n.target for n in graph.nodes if n.op == "call_function"}
    assert parsed == expected
    assert "operator.matmul" in parsed.values() and "operator.gt" in parsed.values()
    # Edges follow the operands: `sub` reads `neg` and `floordiv`.
    sub = next(n for n in graph.nodes if n.target == "operator.sub")
    assert set(sub.inputs) == {"neg", "floordiv"}


def test_exported_program_in_the_explorer():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.lin(x)) + 1

    program = torch.export.export(Block(), (torch.randn(2, 4),))
    widget = compilescope.explore(program)
    payload = json.loads(widget.data)
    labels = json.dumps(payload)
    assert "aten.relu" in labels and "aten.linear" in labels
    graph = graph_from_torch(program)
    assert graph.kind == "export"
    add = next(n for n in graph.nodes if "add" in n.target)
    assert add.tensors and add.tensors[0].shape == ("2", "4")


def test_explore_rejects_other_objects():
    with pytest.raises(TypeError, match="not int"):
        compilescope.explore(3)
