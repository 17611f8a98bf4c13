"""Compile-time causes read from the graphs and guards (the fourth compile-time blind round):
a constant rebuilt in forward, an int that sets a loop's count, inputs in several dtypes."""

from __future__ import annotations

from compilescope import Capture
from compilescope.model.compile import Compile, Frame, StageTime
from compilescope.model.compile_id import CompileId
from compilescope.model.findings.compile_time import compile_time_findings, constant_work
from compilescope.model.findings.guards import guard_fixes, guard_of
from compilescope.model.findings.recompiles import recompile_findings
from compilescope.model.graph import Graph
from compilescope.trace.graph_text import parse_graph_nodes

HEAD = (
    "class GraphModule(torch.nn.Module):\n"
    '    def forward(self, L_x_: "f32[2, 30, 8][240, 8, 1]cpu", '
    'L_s_modules_fc_parameters_weight_: "f32[8, 8][8, 1]cpu"):\n'
    "        l_x_ = L_x_\n"
    "        l_s_modules_fc_parameters_weight_ = L_s_modules_fc_parameters_weight_\n\n"
)
FILE = "/work/alibi.py"


def _bias_loop(rows: int) -> str:
    """What Dynamo writes for `bias[i, : i + 1] = -torch.arange(i + 1, 0, -1).float()` in a
    Python loop in forward (torch 2.14): three operations and a setitem a row."""
    text = f"        # File: {FILE}:7 in forward, code: bias = torch.zeros(T, T)\n"
    text += f'        bias: "f32[{rows}, {rows}][{rows}, 1]cpu" = torch.zeros({rows}, {rows})\n\n'
    text += f"        # File: {FILE}:9 in forward, code: bias[i, : i + 1] = -torch.arange(i + 1, 0, -1).float()\n"
    for i in range(rows):
        text += (
            f'        arange_{i}: "i64[{i + 1}][1]cpu" = torch.arange({i + 1}, 0, -1)\n'
            f'        float_{i}: "f32[{i + 1}][1]cpu" = arange_{i}.float();  arange_{i} = None\n'
            f'        neg_{i}: "f32[{i + 1}][1]cpu" = -float_{i};  float_{i} = None\n'
            f"        bias[({i}, slice(None, {i + 1}, None))] = neg_{i};  setitem_{i} = bias;  "
            f"neg_{i} = setitem_{i} = None\n"
        )
    return text


def _model_work(ops: int) -> str:
    text = f"        # File: {FILE}:11 in forward, code: h = self.fc(x).relu()\n"
    text += '        linear: "f32[2, 30, 8]" = torch._C._nn.linear(l_x_, l_s_modules_fc_parameters_weight_)\n'
    previous = "linear"
    for i in range(ops):
        text += f'        relu_{i}: "f32[2, 30, 8]" = {previous}.relu()\n'
        previous = f"relu_{i}"
    return text + f'        add: "f32[2, 30, 30]" = {previous} + bias\n        return (add,)\n'


def _graph(text: str) -> Graph:
    return Graph("dynamo_output_graph", text, parse_graph_nodes(text))


# A cold compile of 10 s, as torch times its stages (us): Dynamo, then Inductor's.
COLD = (
    StageTime("entire_frame_compile", 0.0, 10e6, 0),
    StageTime("bytecode_tracing", 0.0, 1e6, 1),
    StageTime("compile_fx", 1e6, 9e6, 1),
)


def _compile(n: int, graph: Graph, *reasons: str) -> Compile:
    return Compile(
        CompileId(frame_id=0, frame_compile_id=n),
        frame=Frame("forward", FILE, 5),
        recompile_reasons=reasons,
        graphs={"dynamo_output_graph": (graph,)},
        stage_times=COLD,
    )


def test_a_bias_built_by_a_loop_in_forward_is_precomputed_once():
    capture = Capture((_compile(0, _graph(HEAD + _bias_loop(30) + _model_work(6))),))
    found = constant_work(capture)
    assert found is not None
    assert (found.operations, found.of) == (121, 129)  # zeros and 30 rows of 4
    assert found.where is not None and found.where.line == 9
    fix = next(f for f in compile_time_findings(capture)[0].fixes if "once" in f.title)
    assert fix.title == "compute what does not depend on the inputs once, outside forward"
    assert "register_buffer" in fix.change and "121 of the 129 operations" in fix.change
    assert "most of them at " in fix.change and "alibi.py:9)" in fix.change, fix.change


def test_a_model_whose_graph_reads_its_inputs_gets_no_precompute():
    # A small mask (3 rows: 13 constant operations) beside 60 of the model's own: not named.
    capture = Capture((_compile(0, _graph(HEAD + _bias_loop(3) + _model_work(60))),))
    assert constant_work(capture) is None
    titles = [f.title for f in compile_time_findings(capture)[0].fixes]
    assert not any("once, outside forward" in t for t in titles), titles
    # Many constant operations, but fewer than the model's own: not named either.
    capture = Capture((_compile(0, _graph(HEAD + _bias_loop(20) + _model_work(120))),))
    assert constant_work(capture) is None


def _loop_graph(steps: int) -> Graph:
    text = HEAD + f"        # File: {FILE}:20 in sample, code: x = x + dt * net(x)\n"
    previous = "l_x_"
    for i in range(steps):
        text += (
            f'        linear_{i}: "f32[2, 30, 8]" = torch._C._nn.linear({previous}, '
            "l_s_modules_fc_parameters_weight_)\n"
            f'        x_{i}: "f32[2, 30, 8]" = {previous} + linear_{i}\n'
        )
        previous = f"x_{i}"
    return _graph(text + f"        return ({previous},)\n")


def test_an_int_that_sets_a_loops_count_says_compile_one_iteration():
    steps = (8, 12, 16, 10)
    compiles = [_compile(0, _loop_graph(steps[0]))]
    for n, (before, now) in enumerate(zip(steps, steps[1:], strict=False), start=1):
        compiles.append(_compile(n, _loop_graph(now), f"0/{n - 1}: L['n_steps'] == {before}"))
    (found,) = recompile_findings(Capture(tuple(compiles)))
    assert "for each value of `L['n_steps']` (8, 12, 16)" in found.what
    assert "its graphs grow with it (16, 24, 32, 20 operations)" in found.what, found.what
    first = found.fixes[0]
    assert first.title == "compile one iteration of the loop, and keep the loop in Python"
    assert "for i in range(n_steps)" in first.change
    assert not any("as a tensor" in f.title for f in found.fixes)


def test_an_int_whose_graphs_keep_their_length_keeps_the_tensor_fix():
    # A counter read by the code (the same graph, another constant): no loop.
    compiles = [_compile(0, _loop_graph(4))]
    compiles += [_compile(n, _loop_graph(4), f"0/{n - 1}: L['step'] == {n}") for n in (1, 2, 3)]
    (found,) = recompile_findings(Capture(tuple(compiles)))
    assert found.fixes[0].title == "pass `step` as a tensor"
    assert "grow with it" not in found.what
    # A branch on the int: two lengths at most, never called a loop.
    compiles = [_compile(0, _loop_graph(4))]
    compiles += [
        _compile(n, _loop_graph(4 + n % 2), f"0/{n - 1}: L['step'] == {n}") for n in (1, 2, 3)
    ]
    (found,) = recompile_findings(Capture(tuple(compiles)))
    assert found.fixes[0].title == "pass `step` as a tensor"


def test_inputs_in_several_dtypes_are_cast_before_the_call():
    guard = guard_of("0/0: tensor 'x' dtype mismatch. expected Float, actual Double")
    assert guard == "tensor 'x' dtype mismatch"
    (fix,) = guard_fixes(guard, None)
    assert fix.title == "cast the inputs to one dtype before the call"
    assert "`x.float()`" in fix.change and "inside the compiled function" in fix.change
    reasons = (
        "0/0: tensor 'x' dtype mismatch. expected Float, actual Double",
        "0/1: tensor 'x' dtype mismatch. expected Double, actual Half",
    )
    compiles = (
        _compile(0, _loop_graph(2)),
        _compile(1, _loop_graph(2), reasons[0]),
        _compile(2, _loop_graph(2), reasons[1], *reasons[:1]),
    )
    (found,) = recompile_findings(Capture(compiles))
    assert found.what.startswith("`forward` recompiles for each dtype of `x` (Float, Double")
    assert found.fixes[0].title == "cast the inputs to one dtype before the call"


def test_a_compiled_optimizer_steps_state_is_not_a_constant():
    """A compiled `opt.step` holds the parameters and the optimizer's state as attributes
    (get_attr), not inputs: its update reads them every call (80 of 96 operations of the
    fixture's Adam step read no placeholder)."""
    from compilescope import load_trace
    from conftest import FIXTURES

    for name in ("compiled_step_lr_schedule", "compiled_step_lr_limit", "gpt2"):
        assert constant_work(load_trace(FIXTURES / f"{name}.log.gz")) is None, name
