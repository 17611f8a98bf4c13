"""A compiled optimizer step as torch makes it: its own breaks, a fused step's fall back, its recompiles."""

from __future__ import annotations

import re
from dataclasses import replace

from ..capture import Capture
from ..compile import compile_seconds
from ..place import Place
from .parts import Finding, Fix, TorchText

# A file of torch.optim, wherever torch is installed (a log may come from another machine).
_TORCH_OPTIM = re.compile(r"[\\/]torch[\\/]optim[\\/][^\\/]+\.py$")
# torch's optimizer wrapper `_use_grad` calls `torch._dynamo.graph_break()` before and after the
# update on purpose: the update then compiles as an inference graph that updates the parameters
# in place (torch/optim/optimizer.py; pytorch/pytorch#104053). Every compiled optimizer step
# breaks there, and the user has nothing to remove.
_GRAPH_BREAK_CALL = ("GB0025", "Call to `torch._dynamo.graph_break()`")
# An LR scheduler wraps `opt.step` in a function of torch/optim/lr_scheduler.py, a file Dynamo
# skips on purpose: `torch.compile(opt.step)` then calls the optimizer's step from Dynamo's own
# frame (torch/_dynamo/external_utils.py) and compiles it as a frame of its own, one empty
# frame more. Torch's hints ("Avoid calling the function `Adam.step`") are for code that calls
# a skipped function itself.
_SKIPPED_CALL = ("GB0007", "Attempted to call function marked as skipped")
# The skipped file as torch names it: in the explanation (torch 2.11 and 2.13), in the context's
# skip reason (2.13; 2.11 may write "<missing reason>" there).
_SKIPPED_FILE = re.compile(
    r"in file `([^`]+)` should not be traced|file is force-skipped \(([^)]+)\)"
)
# torch/_dynamo/eval_frame.py disables Dynamo on each `torch.optim.<name>._fused_<name>` ("don't
# trace into fused optimizer"): Dynamo skips the call, and the optimizer's `step` falls back to
# eager entirely (a break in its loop over parameter groups).
_DISABLED_CALL = ("GB0098", "Skip calling `torch.compiler.disable()`d function")
_FUSED_FUNCTION = re.compile(r"<function (_fused_\w+) at ")


def _is(text: TorchText, kind: tuple[str, str]) -> bool:
    gb_id, gb_type = kind
    return text.gb_id == gb_id or text.gb_type == gb_type


def in_torch_optim(location: Place | None) -> bool:
    """A line of torch.optim's own code."""
    return location is not None and _TORCH_OPTIM.search(location.file) is not None


def deliberate_break(texts: tuple[TorchText, ...], location: Place | None) -> bool:
    """A break torch makes on purpose in a compiled optimizer step, no finding: its own
    `torch._dynamo.graph_break()` in torch.optim, or Dynamo skipping an LR scheduler's wrapper."""
    first = texts[0]
    if _is(first, _GRAPH_BREAK_CALL):
        return in_torch_optim(location)
    if _is(first, _SKIPPED_CALL):
        skipped = _SKIPPED_FILE.search(f"{first.explanation}\n{first.context}")
        if skipped is None:
            return False
        path = (skipped.group(1) or skipped.group(2) or "").strip().replace("\\", "/")
        return path.endswith("torch/optim/lr_scheduler.py")
    return False


def fused_update(texts: tuple[TorchText, ...], location: Place | None) -> str | None:
    """The fused update Dynamo skipped (`_fused_adam`) when a break is torch.optim calling it
    under Dynamo; else None."""
    if not in_torch_optim(location) or not _is(texts[0], _DISABLED_CALL):
        return None
    found = _FUSED_FUNCTION.search(texts[0].context or texts[0].explanation)
    return found.group(1) if found else None


def compiled_fused_step(finding: Finding, update: str, capture: Capture) -> Finding:
    """A break finding of a compiled fused optimizer step, told as what it is: compiling the
    step compiles nothing of the update, and the fix is to stop compiling it. Its counts stay
    the break's; its compile ids and compile time are all that the fix saves: every frame of
    torch.optim that Dynamo compiled (the wrapper, `step`, the resume functions)."""
    optimizer = [c for c in capture if in_torch_optim(c.frame.place)]
    compile_s = compile_seconds(optimizer) or 0.0  # the one definition, restarts once
    return replace(
        finding,
        compile_ids=tuple(str(c.id) for c in optimizer) or finding.compile_ids,
        kind="compiled_fused_optimizer",
        key=f"compiled_fused_optimizer:{update}",
        cost=replace(
            finding.cost,
            compile_s=compile_s or finding.cost.compile_s,
            note="compile time: every frame of torch.optim that Dynamo compiled, all of which "
            "the fix saves; the update's own time is in the step's time outside the graphs",
        ),
        what=(
            f"The compiled optimizer step runs eagerly: its optimizer is fused, and torch never "
            f"traces a fused update (`{update}`), so Dynamo compiles frames around it and the "
            f"optimizer's `step` falls back to eager entirely. Compiling it only adds compile time."
        ),
        fixes=(
            Fix(
                "code",
                "step the fused optimizer uncompiled",
                change="call `opt.step()` itself, not a `torch.compile`d `opt.step`: with "
                "`fused=True` the same fused kernel does the update either way",
                where=finding.user,
                tradeoff="nothing measurable lost: compiling a fused step measured 1.03x (a "
                "GPT-2's AdamW) and 0.88x (a ResNet-18's SGD) by the stopwatch on an H200, for "
                "2-3 s more compiling. To have the update compiled instead, build the optimizer "
                "with `foreach=True`: that compiled step ran 0.84x the speed of the fused eager "
                "one (the GPT-2)",
                source="torch/_dynamo/eval_frame.py (fused optimizers are not traced); "
                "benchmarks/RESULTS.md, speed zoo run 8",
            ),
        ),
    )


# A guard on the optimizer's state: torch.optim makes it (momentum buffers, moving averages) at
# the first step, so a compiled step compiles once without it and once with it. Seen: SGD's
# `len(self.state[...]) != 0` (foreach, torch 2.13) and `momentum_buffer_list[0] is None`
# (fused, torch 2.11).
_STATE_GUARD = re.compile(r"\bself\.state\b|\bmomentum_buffer")


def state_recompile(guard: str, frame: Place | None) -> bool:
    """A recompile of torch.optim's own code because the optimizer's state now exists."""
    return in_torch_optim(frame) and _STATE_GUARD.search(guard) is not None


def state_recompile_what(function: str, guard: str) -> str:
    """What a state recompile is, in words (the guard as torch wrote it, shortened)."""
    return (
        f"`{function}` recompiles once: torch.optim makes the optimizer's state (momentum "
        f"buffers, moving averages) at the first step, so the compiled step compiles without it "
        f"and again with it (`{guard}` failed)."
    )


def first_step_eagerly(where: Place | None) -> Fix:
    """The fix of a state recompile: the state made before the first compile."""
    return Fix(
        "code",
        "take the first step eagerly",
        change="call `opt.step()` for the first step and the compiled step from the second on: "
        "the state then exists at the first compile, and the step compiles once",
        where=where,
        tradeoff="the first step runs uncompiled; measured on an H200 (cold caches, foreach "
        "SGD with momentum): the optimizer's compiling fell from 17.0-17.6 s to 6.4-8.0 s (a "
        "ResNet-18) and from 11.5-12.5 s to 5.7-6.0 s (a GPT-2), the step's time unchanged",
        source="compilescope; benchmarks/RESULTS.md (suite gpu-first-step)",
    )


# A guard on the learning rate as a constant: `self.param_groups[0]['lr'] == 0.0003`. A scheduler
# changes the rate, and the compiled step recompiles for the new value.
_LR_GUARD = re.compile(r"param_groups\[\d+\]\[['\"]lr['\"]\]")


def lr_recompile(guard: str, frame: Place | None) -> bool:
    """A recompile of torch.optim's own code because the learning rate changed."""
    return in_torch_optim(frame) and _LR_GUARD.search(guard) is not None


def lr_recompile_what(function: str, guard: str) -> str:
    """What an LR recompile is, in words (the guard as torch wrote it, shortened)."""
    return (
        f"`{function}` recompiles when the learning rate changes: the compiled step holds the "
        f"rate as a constant (`{guard}` failed), and a scheduler changes it."
    )


def lr_in_a_tensor(where: Place | None, optimizer: str = "") -> Fix:
    """The fix of an LR recompile: the rate in a tensor, which the compiled step reads."""
    example = f"torch.optim.{optimizer}(..., lr=torch.tensor(3e-4))" if optimizer else ""
    return Fix(
        "code",
        "keep the learning rate in a tensor",
        change="build the optimizer with `lr=torch.tensor(...)`"
        + (f", e.g. `{example}`" if example else "")
        + ": the compiled step reads the rate from the tensor, which the scheduler updates",
        where=where,
        tradeoff="PyTorch's recipe for a compiled optimizer step with an LR scheduler. Measured "
        "with AdamW and a 10-step warm-up: on an H200 (torch 2.11) the float rate recompiled "
        "the step at every step until the recompile limit, then it ran eagerly (126-136 s of "
        "compiling, the step 1.2-1.9x slower, a GPT-2 and a ResNet-18); in a tensor it compiled "
        "once (12-15 s). On a CPU (torch 2.13) once instead of twice",
        source="PyTorch tutorial: running the compiled optimizer with an LR scheduler",
    )
