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


def test_the_line_reader_gives_the_nodes_the_whole_text_parse_gives(monkeypatch):
    """parse_graph_nodes reads print_readable line by line (fast_statement.py) for speed; on
    every recorded graph it must give exactly the nodes of the ast of the whole text."""
    import gzip
    from pathlib import Path

    from compilescope import Capture, load_trace
    from compilescope.trace import graph_text
    from conftest import FIXTURES, PARSER_FIXTURES

    captures = [load_trace(FIXTURES / f"{name}.log.gz") for name in PARSER_FIXTURES]
    captures.append(load_trace(FIXTURES / "ranks"))
    gpu = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_captures"
    captures += [Capture.from_json(gzip.decompress(p.read_bytes())) for p in gpu.glob("*.gz")]
    texts = {g.text for cap in captures for c in cap for gs in c.graphs.values() for g in gs}
    texts |= {DYNAMO, AOT}
    fast = {text: parse_graph_nodes(text) for text in texts}
    read_by_lines = sum(graph_text._parse_by_lines(text) is not None for text in texts)
    monkeypatch.setattr(graph_text, "fast_node", lambda *args: None)
    slow = {text: graph_text._parse_with_ast(text) for text in texts}
    differing = [t[:200] for t in texts if fast[t] != slow[t]]
    assert not differing, differing[:3]
    assert sum(len(n) for n in fast.values()) > 5_000 and read_by_lines >= len(texts) - 2
