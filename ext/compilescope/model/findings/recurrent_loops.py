"""A recurrent cell called in a Python loop over time steps inside a compiled graph: the fused recurrent module runs the whole sequence in one library call."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..capture import Capture
from .catalog import remedy
from .parts import Cost, Finding
from .places import frame_of, frame_places

if TYPE_CHECKING:
    from ..measured.timing import RealSteps

# The cell ops Dynamo records for nn.LSTMCell, nn.GRUCell and nn.RNNCell, and the module each
# one's sequence form is.
_CELLS = {
    "torch.lstm_cell": "nn.LSTM",
    "torch.gru_cell": "nn.GRU",
    "torch.rnn_tanh_cell": "nn.RNN",
    "torch.rnn_relu_cell": "nn.RNN(nonlinearity='relu')",
}
# Fewer calls than this in one graph is not a loop over a sequence worth a finding.
_LEAST_STEPS = 8


def recurrent_loop_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """Compiles whose Dynamo graph calls a recurrent cell once per time step (the fourth blind
    round's LSTM of `nn.LSTMCell` over 32 steps: 2.42x as `nn.LSTM`, H200). Dynamo unrolls the
    loop: every step's small matmuls and pointwise ops are kernels of their own, forward and
    backward. The cost is those compiles' measured graph time; on a launch-bound GPU step,
    their launches' share of the idle time comes with it (root_cause)."""
    wall = real.compiled.median_s
    seconds: dict[str, float] = {}
    for share in real.graphs:
        seconds[share.compile_id] = seconds.get(share.compile_id, 0.0) + share.seconds
    found = []
    for c in capture:
        cid = str(c.id)
        g = c.graph("dynamo_output_graph")
        if g is None or cid not in seconds or wall <= 0:
            continue
        cells = Counter(n.target for n in g.nodes if n.target in _CELLS)
        if not cells:
            continue
        cell, steps = cells.most_common(1)[0]
        if steps < _LEAST_STEPS:
            continue
        fused = _CELLS[cell]
        launches = sum(k.calls_per_run for k in real.kernels if k.compile_id == cid)
        what = (
            f"`{cell}` is called {steps} times in {cid}'s graph: a Python loop over time steps "
            f"of a recurrent cell, which Dynamo unrolls into {steps} copies of its small matmuls "
            f"and pointwise ops, forward and backward ({launches:.0f} kernel launches a step). "
            f"`{fused}` runs the whole sequence in one library call (cuDNN on a GPU). The "
            f"graph takes {seconds[cid] * 1e3:.3f} ms a step ({seconds[cid] / wall:.0%})."
        )
        found.append(
            Finding(
                kind="recurrent_loop",
                what=what,
                key=f"recurrent_loop:{cid}",
                user=frame_places(frame_of(capture, c), capture)[0],
                compile_ids=(cid,),
                cost=Cost(
                    step_s=seconds[cid],
                    share=seconds[cid] / wall,
                    launches=launches or None,
                    note="the graph's measured time per step, forward and backward",
                ),
                fixes=(remedy("fused_rnn").fix(change=_change(fused)),),
            )
        )
    return found


def _change(fused: str) -> str:
    name = fused.split("(")[0]
    return (
        f"replace the loop over the cell with `{name}(input_size, hidden_size, "
        f"batch_first=True)` called once on the whole sequence (`out, state = rnn(x)`); "
        "for the cell's weights, copy `weight_ih`, `weight_hh`, `bias_ih`, `bias_hh` into "
        "`weight_ih_l0` and the others"
    )
