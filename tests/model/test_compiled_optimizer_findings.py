"""A compiled optimizer step (`torch.compile(opt.step)`): torch's own break in it is no finding,
and a fused optimizer's step, which falls back to eager, is told as that with its own fix.
From logs torch 2.13 wrote for tests/workloads.py's compiled_*_step workloads."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from compilescope.model.compile import compile_seconds
from compilescope.model.findings.ranked import findings, text
from compilescope.model.findings.torch_hints import torch_texts
from compilescope.model.findings.torch_optimizer import (
    deliberate_break,
    in_torch_optim,
    state_recompile,
)
from compilescope.model.measured.timing import OptimizerSeen, RealSteps, Sample, Timings
from compilescope.model.place import Place
from compilescope.trace import graph_break_registry

BREAKS = ("graph_break", "eager_frame", "data_dependent")


@pytest.fixture(scope="module")
def registry():
    return graph_break_registry.load()


def _records(cap):
    return [b for c in cap for b in c.breaks_and_fallbacks]


def _torch_break_call(cap):
    """The `torch._dynamo.graph_break()` torch.optim makes (`_use_grad`), as logged."""
    return next(b for b in _records(cap) if "torch._dynamo.graph_break()" in (b.text or b.reason))


@pytest.mark.parametrize("with_registry", [True, False])
def test_torchs_own_break_in_a_compiled_step_is_no_finding(loaded, registry, with_registry):
    cap = loaded("compiled_foreach_step")
    brk = _torch_break_call(cap)  # the log has it: the step's frame broke there and restarted
    assert brk.location is not None and in_torch_optim(brk.location)
    assert brk.location.file.endswith("torch/optim/optimizer.py")
    found = findings(cap, registry if with_registry else None)
    assert not [f for f in found if f.kind in ("graph_break", "eager_frame")], text(found)
    assert "graph_break()" not in text(found)


def test_the_same_call_in_the_users_code_is_still_a_break(loaded, registry):
    brk = _torch_break_call(loaded("compiled_foreach_step"))
    texts = torch_texts(brk.text or brk.reason, registry)
    assert deliberate_break(texts, brk.location)
    # Only torch.optim's own: the user's graph_break() (or any other library's) is theirs to move.
    assert not deliberate_break(texts, Place("/home/me/train.py", 12))
    assert not deliberate_break(texts, Place("/x/site-packages/transformers/trainer.py", 3))
    assert deliberate_break(texts, Place(r"C:\py\Lib\site-packages\torch\optim\optimizer.py", 79))
    # Another break at the same torch.optim line is not this one.
    other = torch_texts("Graph break: builtin print\n  Explanation: print\n", registry)
    assert not deliberate_break(other, brk.location)


def test_a_compiled_fused_step_is_one_finding_with_its_own_fix(loaded, registry):
    cap = loaded("compiled_fused_step")
    # What the log holds: Adam's `step` fell back to eager, at the call of the fused update.
    assert any(c.status == "eager (fallback)" and c.frame.function == "step" for c in cap)
    found = findings(cap, registry)
    assert [f.kind for f in found] == ["compiled_fused_optimizer"], text(found)
    f = found[0]
    assert "`_fused_adam`" in f.what and "falls back to eager" in f.what
    # Where: the user's call of the compiled step, then torch's line that calls the fused update.
    assert f.user is not None and f.user.code == "step()"
    assert f.user.file.endswith("tests/workloads.py")
    assert f.at is not None and f.at.file.endswith("torch/optim/adam.py")
    (fix,) = f.fixes
    assert fix.kind == "code" and fix.where == f.user and not fix.settings
    assert "opt.step()" in fix.change and "fused=True" in fix.change
    assert "0.84x" in fix.tradeoff and "foreach=True" in fix.tradeoff  # the measured way out
    # Its cost is all of the optimizer's compiling, which the fix saves: every compile here,
    # each counted once (a restart's time is its first attempt's: compile_seconds).
    every = compile_seconds(cap.compiles)
    assert every > 0 and f.cost.compile_s == pytest.approx(every)
    assert f.compile_ids == tuple(str(c.id) for c in cap)  # the wrapper's, the resume functions'
    assert f.counts.eager_frames == 1
    # As plain data and back (the report and a saved capture carry it).
    assert type(f).from_dict(f.to_dict()) == f


def test_without_the_registry_the_message_is_enough(loaded):
    found = findings(loaded("compiled_fused_step"), None)
    assert [f.kind for f in found] == ["compiled_fused_optimizer"], text(found)


def test_a_recompile_for_the_optimizers_first_state_says_so_with_its_fix(loaded, registry):
    cap = loaded("compiled_momentum_step")
    found = findings(cap, registry)
    (f,) = [f for f in found if f.kind == "recompile"]
    assert "recompiles once" in f.what and "momentum buffers" in f.what
    assert "self.state" in f.what  # the guard as torch wrote it
    assert f.user is not None and f.user.code == "step()"
    assert f.at is not None and f.at.file.endswith("torch/optim/sgd.py")
    (fix,) = f.fixes
    assert fix.kind == "code" and fix.where == f.user and "opt.step()" in fix.change
    # Its cost: the recompile's own compile time, which the fix saves.
    (again,) = [c for c in cap if c.recompile_reasons]
    assert f.compile_ids == (str(again.id),) and f.cost.compile_s == pytest.approx(
        again.compile_time_s
    )


def test_only_torch_optims_state_guards_get_that_fix():
    guard = "len(self.state[list(dict.keys(self.state))[0]]) != 0"
    optim = Place("/x/site-packages/torch/optim/sgd.py", 105)
    assert state_recompile(guard, optim)
    assert state_recompile("momentum_buffer_list[0] is None", optim)
    assert not state_recompile(guard, Place("/home/me/my_optimizer.py", 20))
    assert not state_recompile("tensor 'x' size mismatch at index 0", optim)


def test_a_compiled_fused_step_folds_torch_optims_recompiles_into_its_finding(loaded, registry):
    cap = loaded("compiled_fused_momentum_step")
    again = [c for c in cap if c.recompile_reasons]
    # The log has the recompile: SGD's functional `sgd` again once the momentum buffers exist.
    assert again and all("momentum_buffer" in c.recompile_reasons[0] for c in again)
    found = findings(cap, registry)
    assert [f.kind for f in found] == ["compiled_fused_optimizer"], text(found)
    (f,) = found
    assert "`_fused_sgd`" in f.what
    # ... its compile ids and compile time are the fused finding's: stopping compiling saves them.
    assert {str(c.id) for c in again} <= set(f.compile_ids)
    assert f.cost.compile_s == pytest.approx(compile_seconds(cap.compiles))
    assert f.cost.compile_s < sum(c.compile_time_s or 0.0 for c in cap)  # restarts once


def test_an_lr_recompile_says_so_and_offers_the_rate_in_a_tensor(loaded, registry):
    cap = loaded("compiled_step_lr_schedule")
    found = findings(cap, registry)
    (f,) = [f for f in found if f.kind == "recompile"]
    assert "learning rate changes" in f.what and "['lr']" in f.what
    assert f.user is not None and f.user.code == "step()"
    (fix,) = f.fixes
    assert fix.title == "keep the learning rate in a tensor" and "lr=torch.tensor(" in fix.change
    assert fix.where == f.user  # a log does not say where the optimizer is built
    # The scheduler's own break (Dynamo skips lr_scheduler.py's wrapper of the step) is torch's:
    # the log has it, and no finding tells the user to "avoid calling `AdamW.step`".
    skipped = [b for b in _records(cap) if "marked as skipped" in (b.text or b.reason)]
    assert skipped and "lr_scheduler.py" in (skipped[0].text or skipped[0].reason)
    assert [f.kind for f in found if f.kind in BREAKS] == [], text(found)
    assert "Avoid calling" not in text(found)


def test_an_lr_recompile_points_at_the_line_that_builds_the_optimizer_when_seen(loaded):
    seen = OptimizerSeen("AdamW", 4, None, None, True, "/home/me/train.py", 7, "opt = AdamW(...)")
    real = RealSteps(device="cpu", compiled=Sample(0.01, 0.01, 0.01, 10), optimizers=(seen,))
    cap = replace(loaded("compiled_step_lr_schedule"), timings=Timings("cpu", real_steps=real))
    (f,) = [f for f in findings(cap) if f.kind == "recompile"]
    (fix,) = f.fixes
    assert fix.where is not None and (fix.where.file, fix.where.line) == ("/home/me/train.py", 7)
    assert "torch.optim.AdamW(..., lr=torch.tensor(3e-4))" in fix.change


def test_only_an_lr_schedulers_skipped_wrapper_is_torchs_own(loaded, registry):
    cap = loaded("compiled_step_lr_schedule")
    brk = next(b for b in _records(cap) if "marked as skipped" in (b.text or b.reason))
    texts = torch_texts(brk.text or brk.reason, registry)
    assert deliberate_break(texts, brk.location)
    # The same break where the skipped file is not torch.optim's (user code calling a function
    # Dynamo skips) is the user's to see.
    other = (brk.text or brk.reason).replace("torch/optim/lr_scheduler.py", "mylib/sched.py")
    assert not deliberate_break(torch_texts(other, registry), brk.location)


def test_torch_2_11s_skip_text_without_a_reason_is_recognised_too(loaded, registry):
    # torch 2.11 may write "<missing reason>" in the context; its explanation names the file.
    cap = loaded("compiled_step_lr_schedule")
    brk = next(b for b in _records(cap) if "marked as skipped" in (b.text or b.reason))
    message = re.sub(r"skip reason: file is force-skipped \([^)]*\)", "skip reason: <missing reason>",
                     brk.text or brk.reason)  # fmt: skip
    assert "<missing reason>" in message and "force-skipped" not in message
    assert deliberate_break(torch_texts(message, registry), brk.location)


def test_an_lr_recompile_past_the_limit_offers_the_rate_in_a_tensor_first(loaded, registry):
    # As torch 2.11 does on a GPU (8 recompiles, one per rate, then eager); here the limit is 1.
    cap = loaded("compiled_step_lr_limit")
    found = findings(cap, registry)
    (f,) = [f for f in found if f.kind == "recompile_limit"]
    assert "the learning rate, which a scheduler changes" in f.what
    assert [x.title for x in f.fixes][0] == "keep the learning rate in a tensor"
    # Raising the limit stays second, with what it costs: one compile per rate.
    assert "recompile_limit" in f.fixes[1].title and "more compiles" in f.fixes[1].tradeoff
    assert "1.2-1.9x slower" in f.fixes[0].tradeoff  # the GPU measurement it rests on
