"""Optimizer step boundaries, heard without changing what Dynamo compiles.

compilescope follows the user's steps (real-step timing, held memory) by torch's global
optimizer post hook. A compiled optimizer step (`torch.compile(opt.step)`, a training step
compiled whole, a `%%compile_fx` loop) calls that hook inside the code Dynamo traces, so the
hook must be something Dynamo traces through without a graph break and without a node in the
graph: a break there runs inside the step wrapper's `record_function` block, which Dynamo
cannot resume, and the whole optimizer step fell back to eager (issue 30).

So the hook does nothing Dynamo can see. It calls `torch._dynamo.comptime`: while Dynamo
traces, that runs `_after_graph` at compile time, which asks the frame being compiled to call
`_step_ended()` after its graph, as Dynamo does for the print calls it moves out of a graph
(`DebuggingVariable`, `tx.debug_locals`, torch/_dynamo/output_graph.py: compile_subgraph). In
eager code, `comptime` calls its fallback, `_step_ended`, at once. The FX graphs, breaks and
generated code are those of a run without compilescope; only the frame's own bytecode gains
the call (and Dynamo's guard on the hooks dict, as for any hook the user registers).

Torch's `config.reorderable_logging_functions` does the same for a function called at the
frame's top level, but drops calls from inlined functions (an inlining translator's
`debug_locals` is its own list, never read: torch/_dynamo/symbolic_convert.py); the optimizer's
hooks are always inlined, so the call is put on the root translator here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch._dynamo.comptime import comptime

from ...common import OWN_HOOK_REASON
from .. import torch_bridge

_LISTENERS: list[Callable[[], None]] = []
# Told when an optimizer step starts in eager code, with the optimizer (a compiled step is
# never announced: nothing of ours may run inside it, and its time is the graph's).
_STARTERS: list[Callable[[object], None]] = []
_GLOBAL_NAME = "__compilescope_step_ended"
_handles: list[Any] = []
# Why a compiled optimizer step could not be followed (torch's private API moved), or "".
unheard = ""


@torch_bridge.never_traced(OWN_HOOK_REASON)
def _step_ended() -> None:
    """One optimizer step has ended: tell every listener. Disabled: nothing beneath it is
    ever traced, also when it is called from a compiled frame's bytecode."""
    for listener in list(_LISTENERS):
        listener()


@torch_bridge.never_traced(OWN_HOOK_REASON)
def _step_starting(optimizer: object) -> None:
    for starter in list(_STARTERS):
        starter(optimizer)


def _after_graph(ctx: Any) -> None:
    """At compile time: have the frame Dynamo compiles call `_step_ended()` after its graph."""
    global unheard
    try:
        from torch._dynamo.source import GlobalSource
        from torch._dynamo.variables.misc import DebuggingVariable

        tx = ctx._i_will_not_complain_if_bc_breaks_InstructionTranslator()
        if getattr(tx, "export", False):
            return
        while getattr(tx, "parent", None) is not None:  # the frame's own translator
            tx = tx.parent
        name = tx.output.install_global_by_id(_GLOBAL_NAME, _step_ended)
        tx.debug_locals.append((DebuggingVariable(_step_ended, source=GlobalSource(name)), []))
    except Exception as error:  # pragma: no cover - torch's private API moved
        unheard = f"compiled optimizer steps cannot be followed: {type(error).__name__}: {error}"


def _post_hook(_optimizer: object, _args: object, _kwargs: object) -> None:
    comptime(_after_graph, _step_ended)


def _pre_hook(optimizer: object, _args: object, _kwargs: object) -> None:
    # Under Dynamo `is_compiling()` is a constant True: the branch is never traced.
    if not torch.compiler.is_compiling():
        _step_starting(optimizer)


def _skip_as_frame() -> None:
    """Called from eager code while Dynamo's frame callback is on (the eager part of a frame
    with a break), the hook would be compiled as a frame of its own: Dynamo skips it instead.
    Only the frame callback reads this; inlining into a traced step is unchanged."""
    try:
        from torch._dynamo.eval_frame import skip_code

        skip_code(_post_hook.__code__)
        skip_code(_pre_hook.__code__)
    except Exception:  # pragma: no cover - older torch: at worst an empty frame of ours
        pass


_skip_as_frame()


@contextlib.contextmanager
def hearing_steps(
    listener: Callable[[], None], starting: Callable[[object], None] | None = None
) -> Iterator[None]:
    """Inside, `listener()` is called at the end of every optimizer step, eager or compiled,
    and `starting(optimizer)` at the start of every step that runs eagerly.

    One pair of hooks serves every listener: registered with the first and removed with the
    last, so Dynamo sees the same hooks dicts whoever listens."""
    from torch.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )

    _LISTENERS.append(listener)
    if starting is not None:
        _STARTERS.append(starting)
    if not _handles:
        _handles.append(register_optimizer_step_pre_hook(_pre_hook))
        _handles.append(register_optimizer_step_post_hook(_post_hook))
    try:
        yield
    finally:
        _LISTENERS.remove(listener)
        if starting is not None:
            _STARTERS.remove(starting)
        if not _LISTENERS and not _STARTERS:
            while _handles:
                _handles.pop().remove()


def registered() -> bool:
    """Whether our optimizer hooks are on (for the check that a capture leaves nothing)."""
    return bool(_handles)


__all__ = ["hearing_steps", "registered", "unheard"]
