"""print_readable text -> nodes: ops, targets, edges, tensor metadata, source lines, notes."""

from __future__ import annotations

from compilescope.model.graph import TensorMeta
from compilescope.trace.graph_text import parse_graph_nodes

DYNAMO = """class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_lin_parameters_weight_: "f32[8, 8][8, 1]cpu", L_x_: "f32[s0, 8][8, 1]cpu"):
        l_self_modules_lin_parameters_weight_ = L_self_modules_lin_parameters_weight_
        l_x_ = L_x_

        # File: /tmp/m.py:7 in forward, code: y = self.lin(x).relu()
        linear: "f32[s0, 8][8, 1]cpu" = torch._C._nn.linear(l_x_, l_self_modules_lin_parameters_weight_);  l_x_ = None
        y: "f32[s0, 8][8, 1]cpu" = linear.relu();  linear = None

        # No stacktrace found for following nodes
        getitem = y[0]
        return (y, getitem)
"""

AOT = """class <lambda>(torch.nn.Module):
    def forward(
        self,
        primals_1: "f32[4][1]cpu",  # PlainAOTInput(idx=0)
    ):
        # File: /tmp/m.py:3 in f, code: return x.sin()
        sin: "f32[4][1]cpu" = torch.ops.aten.sin.default(primals_1)
        return (
            sin,  # PlainAOTOutput(idx=0)
            primals_1,  # SavedForBackwardsAOTOutput(idx=0)
        )
"""


def test_dynamo_graph_nodes():
    nodes = {n.name: n for n in parse_graph_nodes(DYNAMO)}
    weight = nodes["l_self_modules_lin_parameters_weight_"]
    assert weight.op == "placeholder" and weight.module_path == "lin"
    assert weight.target == "L_self_modules_lin_parameters_weight_"
    linear = nodes["linear"]
    assert linear.op == "call_function" and linear.target == "torch._C._nn.linear"
    assert linear.inputs == ("l_x_", "l_self_modules_lin_parameters_weight_")
    assert linear.source.file == "/tmp/m.py" and linear.source.line == 7
    assert linear.source.code == "y = self.lin(x).relu()"
    assert linear.tensors == (TensorMeta("f32", ("s0", "8"), ("8", "1"), "cpu"),)
    assert nodes["y"].op == "call_method" and nodes["y"].target == "relu"
    assert nodes["getitem"].source is None and nodes["getitem"].target == "operator.getitem"
    assert nodes["output"].inputs == ("y", "getitem")


def test_aot_graph_with_non_identifier_class_and_notes():
    nodes = parse_graph_nodes(AOT)
    assert [n.op for n in nodes] == ["placeholder", "call_function", "output"]
    assert nodes[0].note == "PlainAOTInput(idx=0)"
    assert "SavedForBackwardsAOTOutput(idx=0)" in nodes[-1].note
    assert nodes[1].tensors[0].nbytes == 16


def test_symbolic_dims_with_commas():
    (meta,) = TensorMeta.parse_all("bf16[Max(1, s0), 64][64, 1]cuda:0")
    assert meta.shape == ("Max(1, s0)", "64") and meta.device == "cuda:0"
    assert meta.nbytes is None and meta.numel is None


def test_not_a_graph_gives_no_nodes():
    assert parse_graph_nodes("this is not python (") == []
    assert parse_graph_nodes("x = 1\n") == []
