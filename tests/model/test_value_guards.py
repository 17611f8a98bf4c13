"""Guards on Python values (issue 42): one cause whatever the value, and a fix that stops the
value being guarded, in the guard texts torch writes (2.8-2.14 name sources both ways)."""

from __future__ import annotations

import pytest
from compilescope.model.findings.guards import guard_fixes, guard_of, is_value_guard


@pytest.mark.parametrize(
    ("reasons", "group"),
    [
        (["0/0: self.step == 0  # self.step += 1", "0/1: self.step == 1"], "self.step == <value>"),
        (["0/3: L['self'].step == 7"], "L['self'].step == <value>"),
        (["1/1: G['CALLS'] == 10", "1/2: G['CALLS'] == 9"], "G['CALLS'] == <value>"),
        (["1/0: scale == 0.5"], "scale == <value>"),
        (["2/0: len(L['xs']) == 3", "2/1: len(L['xs']) == 4"], "len(L['xs']) == <value>"),
    ],
)
def test_each_value_of_one_source_is_one_guard(reasons, group):
    assert {guard_of(r) for r in reasons} == {group}
    assert is_value_guard(group)


def test_a_size_guard_is_not_a_value_guard():
    guard = guard_of("0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6")
    assert not is_value_guard(guard)


@pytest.mark.parametrize(
    ("guard", "first", "words"),
    [
        ("self.step == <value>", "code", ("register_buffer('step'",)),
        ("L['self']._modules['blk'].n == <value>", "code", ("register_buffer('n'",)),
        ("G['CALLS'] == <value>", "code", ("torch.tensor(CALLS)", "global")),
        ("L['scale'] == <value>", "code", ("torch.tensor(scale)", "argument")),
        ("not ___dict_contains('mask', L['batch'])", "code", ("`mask`", "every call")),
        ("len(L['xs']) == <value>", "code", ("pad or stack",)),
    ],
)
def test_each_value_guard_gets_a_fix_that_removes_it(guard, first, words):
    fixes = guard_fixes(guard, None)
    assert fixes and fixes[0].kind == first
    text = fixes[0].title + " " + fixes[0].change
    for word in words:
        assert word in text, (word, text)
    assert all("recompile_limit" not in f.python() for f in fixes)


def test_a_module_int_also_gets_the_setting_torch_hints_at():
    fixes = guard_fixes("self.step == <value>", None)
    assert fixes[1].python() == "torch._dynamo.config.allow_unspec_int_on_nn_module = True"


def test_a_float_dynamo_keeps_as_a_number_is_named_as_written():
    # dropout's `p` on torch 2.11 (the blind set's recompile_dropout_float, H100)
    g = guard_of("0/7: ___as_tensor(p).item() == 0.0993  # h = F.dropout(h, p=p)")
    assert g == "___as_tensor(p).item() == <value>" and is_value_guard(g)
    (fix,) = guard_fixes(g, None)
    assert fix.title == "pass `p` as a tensor" and "torch.tensor(p)" in fix.change


def test_a_string_value_guard_keeps_the_branch_out_of_the_shared_graph_not_a_tensor():
    # The second compile-time blind round's multi-task CNN: `task` passed as a string, each task
    # recompiling the shared backbone; "pass `task` as a tensor" was offered (a string has none).
    from compilescope.model.findings.guards import guard_fixes

    for guard in ("task == 'age'", "L['task'] == \"pose\"", "G['MODE'] == 'eval'"):
        (fix,) = guard_fixes(guard, None)
        assert "out of the shared graph" in fix.title
        assert "torch._dynamo.graph_break()" in fix.change and "compile()" in fix.change
    (numeric,) = guard_fixes("L['p'] == 0.5", None)
    assert numeric.title == "pass `p` as a tensor"


def test_a_size_guard_on_the_models_positional_input_offers_mark_dynamic_first():
    # torch.compile(model) compiles torch's `inner(*args, **kwargs)`: the guard names `args[0]`.
    # The second compile-time blind round's varying batch got dynamic=True alone (no gain there).
    from compilescope.model.findings.guards import guard_fixes

    mark, whole = guard_fixes(
        "tensor 'args[0]' size mismatch at index 0. expected 6, actual 3", None
    )
    assert mark.title == "Mark dim 0 of the model's first input dynamic before the first call"
    assert "torch._dynamo.mark_dynamic(x, 0)` on the first tensor" in mark.change
    assert whole.title == "Compile with dynamic=True"
    (only,) = guard_fixes(
        "tensor '___from_numpy(___stack1)' size mismatch at index 1. expected 2, actual 3", None
    )
    assert only.title == "Compile with dynamic=True"


def test_the_third_compile_time_rounds_guards_get_the_fix_that_removes_them():
    # Unfreezing stage by stage, a new optimizer each epoch (the third compile-time blind
    # round: 4 and 5 graphs, 1.44x and 1.27x with these fixes).
    frozen = guard_of(
        "0/1: tensor 'self._modules['blocks']._modules['2']._modules['0']._parameters['bias']' "
        "requires_grad mismatch. expected requires_grad=0"
    )
    (fix,) = guard_fixes(frozen, None)
    assert fix.title == "freeze through the optimizer, not by toggling requires_grad"
    assert "add_param_group" in fix.change and "requires_grad=True" in fix.change
    freed = guard_of("1/1: Cache line invalidated because L['opt'] got deallocated")
    (fix,) = guard_fixes(freed, None)
    assert fix.title == "reuse one `opt` object instead of a new one each time"
    assert "once, outside the loop" in fix.change


def test_a_flag_compiled_for_true_and_false_says_run_the_rare_value_uncompiled():
    import compilescope
    from compilescope.model.compile import Compile, Frame
    from compilescope.model.compile_id import CompileId
    from compilescope.model.findings.recompiles import recompile_findings

    def compiled(n: int, *reasons: str) -> Compile:
        frame = Frame("forward", "model.py", 12)
        return Compile(
            CompileId(frame_id=0, frame_compile_id=n), frame=frame, recompile_reasons=reasons
        )

    compiles = (
        compiled(0),
        compiled(1, "0/0: L['return_attn'] == False"),
        compiled(2, "0/1: L['return_attn'] == True"),
    )
    (found,) = recompile_findings(compilescope.Capture(compiles))
    assert "for each value of `L['return_attn']` (False, True)" in found.what
    assert found.fixes[0].title == "run the rare values of `return_attn` uncompiled"
    assert "eager_on_recompile" in found.fixes[0].change
    # An int's values (a counter) keep the tensor fix first.
    counter = tuple(compiled(i, f"0/{i - 1}: L['step'] == {i}") for i in (1, 2))
    (int_found,) = recompile_findings(compilescope.Capture((compiled(0), *counter)))
    assert "uncompiled" not in int_found.fixes[0].title


def test_a_reason_with_its_user_stack_is_one_reason():
    """torch 2.14 writes a lone reason as plain text followed by its user stack: one reason,
    not four (the overview listed "recompiled: User stack trace:" as a recompile)."""
    from compilescope.trace.builder import reasons_in

    text = (
        "1/0: n_steps == 8                     # for i in range(n_steps):  # s.py:18 in sample\n"
        "User stack trace:\n"
        '  File "/tmp/s.py", line 18, in sample\n'
        "    for i in range(n_steps):\n"
    )
    (reason,) = reasons_in(text)
    assert reason.startswith("1/0: n_steps == 8") and reason.endswith("for i in range(n_steps):")
    assert guard_of(reason) == "n_steps == <value>"
    two = "tensor 'x' size mismatch at index 0. expected 4, actual 6\n0/1: x.dtype changed\n"
    assert reasons_in(two) == two.splitlines()
