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

# The forms the line reader takes without the ast besides plain calls: keyword arguments (their
# values kept, their names not inputs), devices, operators between names or numbers, aliases,
# renamed inputs, annotated inputs with no value; and near misses the ast must still read.
FORMS = """class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4][1]cpu", x_in: "f32[4][1]cpu"):
        x = L_x_
        l_x_ = L_x_
        primals_1: "f32[4][1]cpu"  # PlainAOTInput(idx=0)
        a: "f32[4][1]cpu" = torch.ops.aten.clone.default(x, memory_format = torch.contiguous_format);  x = None
        b = torch.ops.aten.var_mean.correction(a, [2], correction = 0, keepdim = True)
        c: "f32[4][1]cpu" = torch.ops.aten.full.default([4], 0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
        d: "f32[4][1]cpu" = torch.ops.aten.full.default([4], 0, device = device(type='cuda', index=0))
        e: "f32[4][1]cpu" = torch.cat([a, c], dim = -2);  a = None
        f: "f32[4][1]cpu" = 0.044715 * e
        g: "f32[4][1]cpu" = e + f;  e = f = None
        h: "f32[4][1]cpu" = g ** 2
        i: "f32[4][1]cpu" = 1e-05 + g
        j: "f32[4][1]cpu" = 1_000 + g
        k: "b8[4][1]cpu" = g < h
        m = g
        n: "f32[4][1]cpu" = h
        o = x_in.split(64, dim = 2)
        p = x_in.split(dim = 2)
        q: "f32[4][1]cpu" = torch._C._nn.scaled_dot_product_attention(g, h, i, attn_mask = None, dropout_p = 0.1, scale = 0.1767766952966369, is_causal = True)
        type: "f32[4][1]cpu" = torch.ops.aten.full.default([4], 0, device = device(type='cpu'))
        s: "f32[4][1]cpu" = torch.foo(type, device = device(type='cpu'))
        t: "f32[4][1]cpu" = torch.foo(type, x = [type, h])
        u: "f32[4][1]cpu" = torch.foo(h, x = (1, 2), y = -1.5)
        v: "f32[4][1]cpu" = torch.foo(h, x = 'a b', y = [[1]])
        w: "f32[4][1]cpu" = torch.foo(h, x = True,y = 1)
        y: "f32[4][1]cpu" = 1.50 * h
        z: "f32[4][1]cpu" = h != 0
        aa = True
        return (a, b)
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
    gpu = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "gpu_captures"
    captures += [Capture.from_json(gzip.decompress(p.read_bytes())) for p in gpu.glob("*.gz")]
    texts = {g.text for cap in captures for c in cap for gs in c.graphs.values() for g in gs}
    texts |= {DYNAMO, AOT, FORMS}
    fast = {text: parse_graph_nodes(text) for text in texts}
    read_by_lines = sum(graph_text._parse_by_lines(text) is not None for text in texts)
    monkeypatch.setattr(graph_text, "fast_node", lambda *args: None)
    slow = {text: graph_text._parse_with_ast(text) for text in texts}
    differing = [t[:200] for t in texts if fast[t] != slow[t]]
    assert not differing, differing[:3]
    assert sum(len(n) for n in fast.values()) > 5_000 and read_by_lines >= len(texts) - 2
