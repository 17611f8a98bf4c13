"""Writes compile_fx_options.ipynb: one %%compile_fx cell per option (run: python make_options_notebook.py)."""

from pathlib import Path

import nbformat

CELLS = [
    (
        "setup",
        "%load_ext compilescope\nimport logging, torch, compilescope\ntorch.manual_seed(0)\nx = torch.randn(8, 8)\nw = torch.randn(8, requires_grad=True)",
    ),
    ("inductor", "%%compile_fx\ny = (x.sin() + 1).sum()\ny"),
    ("written-back", "print('y is', float(y))"),
    (
        "graph-break",
        "%%compile_fx --backend aot_eager --out c_break\na = x.relu()\nprint('a print breaks the graph')\nb = a * 2",
    ),
    (
        "break-line",
        "brk = c_break.graph_breaks[0][1]\nprint(c_break.cells[brk.location.file], brk.location.line)",
    ),
    ("backward", "%%compile_fx --backend aot_eager --backward --out c_bw\nw.exp() * 2"),
    (
        "backward-check",
        "print('bwd', c_bw[0].graph('aot_backward_graph') is not None, w.grad is not None)",
    ),
    ("dynamic", "%%compile_fx --backend aot_eager --dynamic --out c_dyn\nd = x.view(-1) * 3"),
    ("no-dynamic", "%%compile_fx --backend aot_eager --no-dynamic\nd2 = x.view(-1) * 3"),
    ("fullgraph", "%%compile_fx --backend aot_eager --fullgraph\nf = x.cos().sum()"),
    ("mode", "%%compile_fx --mode reduce-overhead --quiet\nm = x.tanh() + 1"),
    ("options", "%%compile_fx --options fallback_random=True --quiet\no = x.exp()"),
    (
        "partitioner",
        "%%compile_fx --backend aot_eager --partitioner default --quiet\np = (w.sin().cos() * 2).sum()\np.backward()",
    ),
    (
        "compiled-autograd",
        "%%compile_fx --backend aot_eager --compiled-autograd --out c_ca\nq = (w * w).sum()\nq.backward()",
    ),
    ("ca-check", "print('ca', any(c.graph('compiled_autograd_graph') for c in c_ca))"),
    ("fresh", "%%compile_fx --backend eager --fresh --quiet\nr = x + 1"),
    (
        "diff",
        "%%compile_fx --backend aot_eager --diff c_break\na = x.relu()\nprint('a print breaks the graph')\nb = a * 3",
    ),
    ("quiet", "%%compile_fx --backend aot_eager --quiet\nz = x * 5"),
    (
        "user-error",
        "%%compile_fx --backend aot_eager\nu = x.sin()\nprint('break')\nraise ValueError('boom from the cell')",
    ),
    ("syntax-error", "%%compile_fx\ny = = 2"),
    ("bad-option", "%%compile_fx --backend nope\nside = 1"),
    (
        "state",
        "import torch._inductor.config as cfg\nprint('state', logging.getLogger('torch.__trace').handlers, cfg.force_disable_caches, cfg.trace.provenance_tracking_level, 'side' in dir())",
    ),
]
RAISES = {"user-error", "syntax-error", "bad-option"}


def main() -> None:
    nb = nbformat.v4.new_notebook()
    for tag, source in CELLS:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["tags"] = [tag] + (["raises-exception"] if tag in RAISES else [])
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, Path(__file__).with_name("compile_fx_options.ipynb"))


if __name__ == "__main__":
    main()
